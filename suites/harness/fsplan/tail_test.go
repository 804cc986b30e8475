//go:build linux

package fsplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/suites/probe"
)

// A Tail check is escaped when the host file ends with the check's token (its last 4 KiB), not
// when the token sits only further up or the file is as it was.
func TestTailEscaped(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "entry")
	p := Plan{Check: probe.FSCheck{Op: probe.OpReplace, Path: f, Content: "tok3n"}, Tail: f}
	for _, c := range []struct {
		name, content string
		want          bool
	}{
		{"as it was", strings.Repeat("x", 10<<10), false},
		{"replaced", "tok3n", true},
		{"appended to a large file", strings.Repeat("x", 10<<10) + "tok3n", true},
		{"token far up only", "tok3n" + strings.Repeat("x", 10<<10), false},
	} {
		if err := os.WriteFile(f, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := p.Escaped(); got != c.want {
			t.Errorf("%s: Escaped = %v, want %v", c.name, got, c.want)
		}
	}
	if !p.HostChecked() {
		t.Error("a Tail check is host-checked")
	}
}
