//go:build linux

package network

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
)

// TestSessionTmpAndHomeGoWithTheTrial: the sandbox and the command inside get a TMPDIR and a
// HOME of the trial's own, under its directory, so what they leave there (sockets, a runtime's
// per-project state) goes with the trial. The command target with no sandbox shows the
// environment the harness hands a sandbox plainly; as root and as the unprivileged user, who must
// be able to write both.
func TestSessionTmpAndHomeGoWithTheTrial(t *testing.T) {
	skip.UnlessRoot(t, "fixture hosts and the user switch")
	for _, user := range []string{model.UserRoot, model.UserUnprivileged} {
		t.Run(user, func(t *testing.T) {
			work := workDir(t)
			got := sessionTmpAndHome(t, work, user)
			for _, k := range []string{"tmpdir", "home"} {
				if !strings.HasPrefix(got[k], filepath.Join(work, "sandcheck-trial-")) {
					t.Errorf("%s = %q, want one under the trial directory in %s", k, got[k], work)
				}
			}
			if got["tmpdir"] == got["home"] {
				t.Errorf("TMPDIR and HOME are the same directory: %s", got["home"])
			}
			if left, _ := os.ReadDir(work); len(left) > 0 {
				t.Errorf("the trial left %d entries in its work directory (first %s)", len(left), left[0].Name())
			}
		})
	}
}

// TestSessionTmpStaysOnItsFileSystem: with the trial directories on another file system than
// the session's TMPDIR (SANDCHECK_WORKDIR on a WSL 2 Windows drive), the trial's own TMPDIR and
// HOME are in a directory of the trial's in the session's TMPDIR, where the sandbox's sockets
// would be for its user, and go with the trial too.
func TestSessionTmpStaysOnItsFileSystem(t *testing.T) {
	skip.UnlessRoot(t, "fixture hosts, the user switch and a tmpfs")
	work := workDir(t)
	if err := unix.Mount("tmpfs", work, "tmpfs", 0, "mode=0755"); err != nil {
		t.Fatalf("a tmpfs for the trial directories: %v", err)
	}
	defer unix.Unmount(work, unix.MNT_DETACH)
	sessionTmp := os.TempDir()
	got := sessionTmpAndHome(t, work, model.UserUnprivileged)
	for _, k := range []string{"tmpdir", "home"} {
		if !strings.HasPrefix(got[k], filepath.Join(sessionTmp, "sandcheck-trial-")) {
			t.Errorf("%s = %q, want one in a trial's directory in %s", k, got[k], sessionTmp)
		}
		if _, err := os.Stat(filepath.Dir(got[k])); !os.IsNotExist(err) {
			t.Errorf("%s's directory outlived the trial (%v)", got[k], err)
		}
	}
}

// workDir is a parent for trial directories that the unprivileged user can reach (t.TempDir's
// parent is 0700).
func workDir(t *testing.T) string {
	t.Helper()
	work, err := os.MkdirTemp("", "sandcheck-private-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o755)
	return work
}

// sessionTmpAndHome runs a trial in work as user whose command reports its TMPDIR and HOME and
// writes a file in each, which must work.
func sessionTmpAndHome(t *testing.T, work, user string) map[string]string {
	t.Helper()
	cfg := harness.Config{Target: "command", TargetSettings: `{"argv": ["sh", "-c", "{{.Command}}"], "reach": []}`,
		Hostnames: "name", Timeout: 20 * time.Second, WorkDir: work, User: user}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ct, err := RunCommand(ctx, cfg, Options{}, func(Hosts) string {
		return `echo "tmpdir=$TMPDIR"; echo "home=$HOME"; touch "${TMPDIR:?}/left" "${HOME:?}/left" && echo made`
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ct.Output, "made") {
		t.Fatalf("the command could not write its TMPDIR and HOME: %q, stderr %q", ct.Output, ct.Run.Stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(ct.Output, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	return got
}
