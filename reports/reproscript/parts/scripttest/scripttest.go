// Package scripttest runs standalone reproducers in the reproducers' own tests, as a maintainer
// would: `sh SCRIPT` as root with a clean environment, SANDBOX a stand-in for the sandbox.
package scripttest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Path is the PATH a script runs with.
const Path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Run runs the script file as root with SANDBOX=sandbox, RUN_AS=root and env, and returns its
// exit status and what it printed.
func Run(file, sandbox string, env ...string) (int, string) {
	cmd := exec.Command("sh", file)
	cmd.Env = append([]string{"PATH=" + Path, "SANDBOX=" + sandbox, "RUN_AS=root"}, env...)
	out, err := cmd.CombinedOutput()
	var x *exec.ExitError
	if errors.As(err, &x) {
		return x.ExitCode(), string(out)
	}
	if err != nil {
		return -1, string(out) + err.Error()
	}
	return 0, string(out)
}

// ArgvStandIns writes into a directory any account can reach two stand-ins for a sandbox whose
// command line carries the command (ARGS... -- CMD): open runs the command unconfined, none runs
// nothing and fails.
func ArgvStandIns(t *testing.T) (open, none string) {
	return standIns(t, "#!/bin/sh\n# ARGS... -- CMD: the command, unconfined\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n")
}

// SrtStandIns is ArgvStandIns for srt's command line (--settings FILE -c CMD).
func SrtStandIns(t *testing.T) (open, none string) {
	return standIns(t, "#!/bin/sh\n# --settings FILE -c CMD: the command, unconfined\nexec sh -c \"$4\"\n")
}

// standIns writes open, the stand-in that runs the command, and none.
func standIns(t *testing.T, openText string) (open, none string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	open, none = filepath.Join(dir, "open-sandbox"), filepath.Join(dir, "no-sandbox")
	for p, text := range map[string]string{
		open: openText,
		none: "#!/bin/sh\necho refused >&2\nexit 1\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return open, none
}

// Check reports what a written script lacks: each of wants, no trace of the trial's directory
// (the script's own stands in it), and valid sh (`sh -n`).
func Check(t *testing.T, script, trialDir string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(script, trialDir) {
		t.Error("the trial's directory is left in the script")
	}
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
}
