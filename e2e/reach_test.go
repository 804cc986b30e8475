package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/targets/srt"
)

// TestUnreachableShimRefused: a user injects their own fault by putting a shim first on PATH in
// a root-only directory (as /root is). The sandbox's unprivileged user cannot search it, so srt
// would start the real socat and the trial would read `correct`: trial, preflight and run refuse
// before anything runs (exit 2, naming the entry, why, and the fix); as root the shim is what
// srt starts, and the trial shows the fault. A sandbox executable the user cannot run is refused
// too (it would never start, which fail-closed scenarios count as a loud refusal).
func TestUnreachableShimRefused(t *testing.T) {
	requireSandbox(t)
	private, err := os.MkdirTemp("/tmp", "sandcheck-e2e-root-home-") // 0700, root's
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(private)
	shims := filepath.Join(private, "shims")
	if err := os.Mkdir(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shims, "socat"), []byte("#!/bin/sh\necho 'socat: broken on purpose' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + shims + ":" + os.Getenv("PATH")}
	refused := func(what, stdout, stderr string, code int, want ...string) {
		t.Helper()
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (refused)\nstdout: %s\nstderr: %s", what, code, stdout, stderr)
			return
		}
		for _, w := range append(want, "--user root") {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, w, stderr)
			}
		}
		if strings.Contains(stdout, "outcome:") {
			t.Errorf("%s: a trial ran:\n%s", what, stdout)
		}
	}
	entry := []string{"PATH entry 1, " + shims, private + " is mode 0700, owner root", "your PATH finds socat there", "instead"}

	stdout, stderr, code := sandcheckExit(t, env, "trial", "--label-filter", "network && seed")
	refused("trial", stdout, stderr, code, entry...)

	stdout, stderr, code = sandcheckExit(t, env, "preflight")
	refused("preflight", stdout, stderr, code, entry...)

	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code = sandcheckExit(t, env, "run", "--plain", "-n", "1", "--label-filter", "network && seed", "--out", out)
	refused("run", stdout, stderr, code, entry...)
	if _, err := os.Stat(filepath.Join(out, "journal.jsonl")); err == nil {
		t.Error("run: a journal was written: trials ran")
	}

	stdout, stderr, code = sandcheckExit(t, env, "trial", "--label-filter", "network && seed", "--user", "root")
	if code != 1 || !strings.Contains(stdout, "outcome: sandbox-failed") {
		t.Errorf("as root the shim is what srt starts, so the trial must show it (sandbox-failed, exit 1): exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	real, err := srt.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(private, "srt")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec '"+real+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = sandcheckExit(t, nil, "trial", "--target-path", wrapper, "--label-filter", "failclosed")
	refused("trial --target-path", stdout, stderr, code, "--target-path: user sandcheck cannot run "+wrapper)
}
