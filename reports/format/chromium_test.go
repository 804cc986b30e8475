package format

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestHTMLInChromium renders report.html in headless Chromium (Debian's `chromium`), checks the
// screenshot is not blank and that the live DOM, after the page's script ran, holds the cells.
func TestHTMLInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		skip.Missing(t, "chromium is not installed (apt-get install chromium); report.html was not rendered in a browser")
	}
	dir := t.TempDir()
	rep := seedReport(t)
	if err := WriteAll(dir, rep, seedOpts); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, HTMLFile)
	shot := filepath.Join(dir, "shot.png")
	// Flags from the machine notes: without the background-networking ones Chromium keeps trying
	// to reach Google on a closed network.
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := chromiumCmd(ctx, bin, dir, append(base, args...)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return out
	}
	run("--window-size=1200,1400", "--screenshot="+shot, page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colors := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[(r>>8)<<16|(g>>8)<<8|bl>>8]++
		}
	}
	if len(colors) < 8 {
		t.Fatalf("screenshot looks blank: %d distinct colours", len(colors))
	}
	dom := string(run("--dump-dom", page))
	if n := strings.Count(dom, `data-testid="cell"`); n != len(rep.Overall) {
		t.Fatalf("live DOM has %d cells, want %d", n, len(rep.Overall))
	}
}
