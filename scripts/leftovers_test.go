// Package scripts holds the tests of the shell scripts beside them.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestCheckLeftoversBlamesWhatIsNew: check-leftovers.sh blames whatever appeared in the places a
// trial can write since the snapshot, whatever its name (a kind of leftover nobody taught it), a
// left directory as one line, and not what was there before, what is ignored, or what is gone.
func TestCheckLeftoversBlamesWhatIsNew(t *testing.T) {
	skip.Short(t, "runs the leftover check over real processes and mounts, about 20 s")
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b, filepath.Join(a, "old")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(root, "before.txt")
	env := append(os.Environ(), "SANDCHECK_LEFTOVERS_PLACES="+a+" "+b, "SANDCHECK_LEFTOVERS_IGNORE="+filepath.Join(b, "other-*"))
	run := func(args ...string) (string, bool) {
		cmd := exec.Command("bash", append([]string{"check-leftovers.sh"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			t.Fatalf("check-leftovers.sh %v: %v", args, err)
		}
		return string(out), err == nil
	}
	if out, ok := run("--snapshot", snap); !ok {
		t.Fatalf("snapshot: %s", out)
	}
	made := []string{
		filepath.Join(a, "old", "unknown-kind.sock"),           // new in a directory that was there
		filepath.Join(a, "claude-0", "-ws", "session", "task"), // a new tree: one line for its top
		filepath.Join(b, "other-agent", "file"),                // ignored
	}
	for _, p := range made {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, ok := run("--since", snap)
	if ok {
		t.Fatalf("new paths left, yet it passed:\n%s", out)
	}
	for _, want := range []string{"new path: " + made[0], "new path: " + filepath.Join(a, "claude-0") + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{filepath.Join(a, "claude-0", "-ws"), "other-agent", filepath.Join(a, "old") + "\n"} {
		if strings.Contains(out, not) {
			t.Errorf("output blames %q:\n%s", not, out)
		}
	}
	os.Remove(made[0])
	os.RemoveAll(filepath.Join(a, "claude-0"))
	if out, _ := run("--since", snap); strings.Contains(out, root) {
		t.Errorf("what is gone is still blamed:\n%s", out)
	}
}
