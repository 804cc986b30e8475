package process

import (
	"testing"
)

func TestFrameKeeperKeepsWholeFramesAcrossWrites(t *testing.T) {
	k := newFrameKeeper([]string{"RES ", "EGR "}, 1<<20)
	// Prefixes split over writes, a line that starts like a prefix but is not one, a frame
	// without its end.
	for _, w := range []string{"noise\nRE", "S {\"a\":1}\nRESULT no\nE", "G", "R x", "y\nEGO\n", "\nEGR tail"} {
		k.Write([]byte(w))
	}
	if got, want := string(k.bytes()), "RES {\"a\":1}\nEGR xy\nEGR tail\n"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
	// Over the cap a frame is dropped whole, and a later one that fits is still kept.
	k = newFrameKeeper([]string{"F "}, 10)
	k.Write([]byte("F 1\nF 0123456789\nF 2\n"))
	if got := string(k.bytes()); got != "F 1\nF 2\n" || !k.dropped {
		t.Fatalf("kept %q dropped %v", got, k.dropped)
	}
}
