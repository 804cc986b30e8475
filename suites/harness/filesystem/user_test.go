//go:build linux

package filesystem

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The probe is this test binary when a trial runs it (under the command target).
func TestMain(m *testing.M) {
	probe.MaybeRun()
	os.Exit(m.Run())
}

// noSandbox is the command target running the probe with no sandbox at all: what the harness
// does around the sandbox (the user switch, the unsandboxed checks) shows plainly.
const noSandbox = `{"argv": ["sh", "-c", "{{.Command}}"], "capabilities": ["writable-paths", "deny-read"], "reach": []}`

func noSandboxConfig(t *testing.T, user string) harness.Config {
	t.Helper()
	skip.UnlessRoot(t, "switching users and creating the dedicated account")
	return harness.Config{Target: "command", TargetSettings: noSandbox, Hostnames: "name", Timeout: 20 * time.Second,
		WorkDir: os.TempDir(), User: user}
}

// TestSandboxRunsAsTheUser: with the default user, the command under the "sandbox" runs with
// the dedicated account's uid (the probe reports it) and HOME; each denied check is tried first
// without the sandbox as that user, and one the user cannot do anyway (write /etc) is
// not-applicable, with the reason, instead of counting as enforcement. As root the same check
// is judged (and, with no sandbox, fails open).
func TestSandboxRunsAsTheUser(t *testing.T) {
	cfg := noSandboxConfig(t, model.UserUnprivileged)
	acct, err := users.Resolve(model.UserUnprivileged)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ft, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ft.Observation == nil || ft.Observation.UID != acct.UID {
		t.Fatalf("probe ran as %+v, want uid %d; run %+v", ft.Observation, acct.UID, ft.Run)
	}
	if ft.User == nil || ft.User.Name != model.DedicatedUser || len(ft.Unsandboxed) == 0 {
		t.Fatalf("evidence: user %+v, unsandboxed %v", ft.User, ft.Unsandboxed)
	}
	etc := ft.Result.Checks["outside/etc"]
	if etc.Outcome != model.NotApplicable || !strings.Contains(etc.Hint, "even without a sandbox (EACCES)") {
		t.Errorf("outside/etc as %s: %+v", acct.Name, etc)
	}
	// No sandbox: what the user can do, it did, in its own HOME.
	home := ft.Result.Checks["outside/home"]
	if home.Outcome != model.NonEnforcing || !strings.Contains(home.Hint, acct.Home+"/sandcheck-fs-") {
		t.Errorf("outside/home as %s: %+v", acct.Name, home)
	}
	if r := ft.Result.Checks["secret/read"]; r.Outcome != model.NonEnforcing {
		t.Errorf("secret/read: the user owns the secret and no sandbox hides it: %+v", r)
	}

	root, err := Run(ctx, noSandboxConfig(t, model.UserRoot))
	if err != nil {
		t.Fatal(err)
	}
	if root.Observation == nil || root.Observation.UID != 0 {
		t.Fatalf("as root: probe uid %+v", root.Observation)
	}
	if c := root.Result.Checks["outside/etc"]; c.Outcome != model.NonEnforcing {
		t.Errorf("outside/etc as root with no sandbox: %+v", c)
	}
}

// TestTrialDirOutOfReach: a trial directory the user cannot enter is a setup error that says
// which directory and what to do, not a sandbox failure.
func TestTrialDirOutOfReach(t *testing.T) {
	cfg := noSandboxConfig(t, model.UserUnprivileged)
	private, err := os.MkdirTemp("", "sandcheck-private-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(private)
	os.Chmod(private, 0o700)
	cfg.WorkDir = private
	_, err = Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "out of reach") || !strings.Contains(err.Error(), private+" is mode 0700") {
		t.Fatalf("err = %v", err)
	}
}
