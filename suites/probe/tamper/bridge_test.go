package tamper

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSwapBridge: every unix socket under the directory (a sandbox's bridge sockets, one level
// down too) is replaced by a link to the chosen socket, which is left alone, as are files that
// are no socket; each swap is recorded, and a directory with none says so.
func TestSwapBridge(t *testing.T) {
	dir := t.TempDir()
	var socks []string
	for _, p := range []string{filepath.Join(dir, "srt-http.sock"), filepath.Join(dir, "sub", "srt-socks.sock")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		socks = append(socks, p)
	}
	to := filepath.Join(dir, "host.sock")
	ln, err := net.Listen("unix", to)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644)
	got := SwapBridge(dir, to)
	for _, p := range socks {
		if l, err := os.Readlink(p); err != nil || l != to {
			t.Errorf("%s: link %q %v, want one to %s", p, l, err, to)
		}
		if !strings.Contains(strings.Join(got, "\n"), "swapped "+p) {
			t.Errorf("%s not recorded: %q", p, got)
		}
	}
	if fi, err := os.Lstat(to); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("the chosen socket was touched: %v %v", fi, err)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "plain")); fi == nil || !fi.Mode().IsRegular() {
		t.Errorf("a plain file was touched")
	}
	if got := SwapBridge(t.TempDir(), to); len(got) != 1 || !strings.HasPrefix(got[0], "no unix socket under ") {
		t.Errorf("an empty directory: %q", got)
	}
}
