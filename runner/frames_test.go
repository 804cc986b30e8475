package runner

import (
	"bytes"
	"strings"
	"testing"
)

func TestFrameKeeperKeepsWholeFramesAcrossWrites(t *testing.T) {
	k := NewFrameKeeper([]string{"RES ", "EGR "}, "", 1<<20)
	// Prefixes split over writes, a line that starts like a prefix but is not one, a frame
	// without its end.
	for _, w := range []string{"noise\nRE", "S {\"a\":1}\nRESULT no\nE", "G", "R x", "y\nEGO\n", "\nEGR tail"} {
		k.Write([]byte(w))
	}
	if got, want := string(k.Bytes()), "RES {\"a\":1}\nEGR xy\nEGR tail\n"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
	// Over the cap a frame is dropped whole, and a later one that fits is still kept; without
	// a key every frame is the trial's own, so the loss is reported.
	k = NewFrameKeeper([]string{"F "}, "", 10)
	k.Write([]byte("F 1\nF 0123456789\nF 2\n"))
	if got := string(k.Bytes()); got != "F 1\nF 2\n" || !k.Lost() || !k.Capped() {
		t.Fatalf("kept %q lost %v", got, k.Lost())
	}
}

// Told the key, the keeper keeps the trial's own frames within their budget whatever number of
// frame-looking lines came before, split over writes however they come; those others have a
// budget of their own, and dropping them is no loss.
func TestFrameKeeperKeyedFramesOutliveAFlood(t *testing.T) {
	const key = "k3y"
	k := NewFrameKeeper([]string{"RES ", "EGR "}, key, 64)
	forged := strings.Repeat("EGR k3 {}\nEGR {}\nRES k3yy {}\nEGR k3x {}\n", OtherFramesMax/20)
	own := "EGR k3y {1}\nRES k3y {2}\n"
	stream := forged + own + "EGR k3"
	for len(stream) > 0 { // in writes of 7 bytes: prefixes and keys split everywhere
		n := min(7, len(stream))
		k.Write([]byte(stream[:n]))
		stream = stream[n:]
	}
	got := k.Bytes()
	var ownLines []string
	for _, l := range strings.Split(string(got), "\n") {
		if strings.HasPrefix(l, "EGR "+key+" ") || strings.HasPrefix(l, "RES "+key+" ") {
			ownLines = append(ownLines, l)
		}
	}
	if strings.Join(ownLines, "|") != "EGR k3y {1}|RES k3y {2}" {
		t.Fatalf("own frames kept: %q", ownLines)
	}
	if k.Lost() || !k.Capped() || len(got) > OtherFramesMax+64+2 {
		t.Fatalf("lost %v capped %v, %d bytes kept", k.Lost(), k.Capped(), len(got))
	}
	// The trial's own frames past their cap: dropped whole and reported.
	k = NewFrameKeeper([]string{"EGR "}, key, 30)
	k.Write([]byte("EGR k3y {1}\nEGR k3y {2}\nEGR k3y {3}\nEGR other\n"))
	if got := string(k.Bytes()); got != "EGR k3y {1}\nEGR k3y {2}\nEGR other\n" || !k.Lost() {
		t.Fatalf("kept %q lost %v", got, k.Lost())
	}
	if !bytes.Contains([]byte(LostError(30).Error()), []byte("dropped")) {
		t.Fatal(LostError(30))
	}
}
