//go:build linux

package initramfs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// The archive is what the kernel unpacks: check it with the real cpio(1) where present.
func TestCPIOIsNewcArchive(t *testing.T) {
	skip.UnlessTools(t, "make deps-test", "cpio")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("abcde"), 0o644)
	var buf bytes.Buffer
	c := NewCPIO(&buf)
	c.Dir("d", 0o755)
	c.Bytes("d/x", 0o755, []byte("hello"))
	c.File("d/y", 0o644, src)
	c.Symlink("d/z", "x")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Fatalf("archive length %d not 4-aligned", buf.Len())
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	cmd := exec.Command("cpio", "-idm", "--quiet")
	cmd.Dir, cmd.Stdin = out, &buf
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v %s", err, o)
	}
	for f, want := range map[string]string{"d/x": "hello", "d/y": "abcde", "d/z": "hello"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", f, b, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(out, "d/x")); st == nil || st.Mode().Perm() != 0o755 {
		t.Errorf("d/x mode: %v", st)
	}
}
