package remote

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/config"
)

func TestShellQuotingAndBinaryChoice(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'", "K=v/x": "K=v/x"} {
		if got := Shq(in); got != want {
			t.Errorf("Shq(%q) = %s, want %s", in, got, want)
		}
	}
	t.Cleanup(config.With(func(e *config.Env) { e.LinuxBinary = "" }))
	if _, err := LinuxBinary("", "/etc/hostname"); err == nil || !strings.Contains(err.Error(), EnvLinuxBinary) {
		t.Errorf("non-ELF runner binary: %v", err)
	}
}

// The close script kills the run's processes by its marker, sweeps after every user but root
// with the run's binary, then removes the run directory; without a directory there is nothing
// to close.
func TestCloseScript(t *testing.T) {
	r := NewRun()
	if s := r.CloseScript([]string{"unprivileged"}); s != "" {
		t.Fatalf("before Prepare: %q", s)
	}
	r.dir = "/tmp/sandcheck-host-x"
	s := r.CloseScript([]string{"root", "unprivileged", "ci"})
	want := r.KillRun() + "; /tmp/sandcheck-host-x/sandcheck user --sweep unprivileged >/dev/null 2>&1; " +
		"/tmp/sandcheck-host-x/sandcheck user --sweep ci >/dev/null 2>&1; rm -rf -- /tmp/sandcheck-host-x"
	if s != want || !strings.Contains(s, MarkRun+"="+r.ID) {
		t.Fatalf("close script:\n%s\nwant\n%s", s, want)
	}
}
