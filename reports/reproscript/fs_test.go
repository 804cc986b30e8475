package reproscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// fsScriptFor writes the reproducer of case id from the fs-interplay session's evidence.
func fsScriptFor(t *testing.T, id string) string {
	t.Helper()
	f, _ := scriptFile(t, model.Record{Evidence: fsTrialEvidence("")}, "bypass/"+id, "write $HOME/x")
	return f
}

// scriptFile writes the reproducer of scenario from rec's evidence into a file of its own: the
// file and the script.
func scriptFile(t *testing.T, rec model.Record, scenario, why string) (string, string) {
	t.Helper()
	s, err := Script(rec, scenario, why)
	if err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	if err := os.WriteFile(f, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return f, s
}

// TestFSScript: every fs-interplay and privilege case gets a script that is valid sh, carries the
// trial's settings with its own directory in the trial's place, runs the control without a
// sandbox first and the sandbox as the trial's account; a fault's finding and an unknown case
// get none.
func TestFSScript(t *testing.T) {
	for id, fc := range fsCases {
		f := fsScriptFor(t, id)
		b, _ := os.ReadFile(f)
		s := string(b)
		for _, want := range []string{`"@DIR@/fakehome"`, "RUN_AS=${RUN_AS:-sandcheck}", "could not tell: the operation does not take effect even without a sandbox",
			fc.control, `inside "$SANDBOX" --settings "$w/settings.json"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: script lacks %q", id, want)
			}
		}
		if strings.Contains(s, "/tmp/sandcheck-trial-7") {
			t.Errorf("%s: the trial's directory is left in the script", id)
		}
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", id, err, out)
		}
	}
	if _, err := Script(model.Record{Evidence: fsTrialEvidence("fs-unmask")}, "bypass/fs-interplay/protected-bashrc-from-subdir", ""); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("a fault's finding: %v", err)
	}
	if _, err := Script(model.Record{Evidence: fsTrialEvidence("")}, "bypass/privilege/no-such-case", ""); err == nil {
		t.Error("an unknown case got a script")
	}
}

// TestFSScriptDecides runs the fs-interplay scripts (not the privilege ones: without a sandbox
// their steps would remount and unmount this host's own mounts) with two stand-ins for the
// sandbox: one that runs the command unconfined must make each exit 1, one that runs nothing
// exit 0. The real srt's are run by e2e's TestReproStandaloneFS.
func TestFSScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account (setpriv)")
	skip.UnlessTools(t, "apt-get install git util-linux", "git", "setpriv", "findmnt")
	bin := t.TempDir()
	open := filepath.Join(bin, "open-sandbox")
	none := filepath.Join(bin, "no-sandbox")
	os.WriteFile(open, []byte("#!/bin/sh\n# --settings FILE -c CMD: the command, unconfined\nexec sh -c \"$4\"\n"), 0o755)
	os.WriteFile(none, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	os.Chmod(bin, 0o755)
	for id := range fsCases {
		if !strings.HasPrefix(id, "fs-interplay/") && !strings.HasPrefix(id, "globs/") {
			continue
		}
		f := fsScriptFor(t, id)
		for sandbox, want := range map[string]int{open: 1, none: 0} {
			if code, out, _ := runAsRoot(f, sandbox); code != want {
				t.Errorf("%s with %s: exit %d, want %d\n%s", id, filepath.Base(sandbox), code, want, out)
			}
		}
	}
}

// runAsRoot runs the reproducer f as a maintainer would, with sandbox as SANDBOX and RUN_AS root:
// its exit status, what it printed and its process id (its shell's $$).
func runAsRoot(f, sandbox string) (code int, out string, pid int) {
	cmd := exec.Command("sh", f)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + sandbox, "RUN_AS=root"}
	b, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	if x, ok := err.(*exec.ExitError); ok {
		return x.ExitCode(), string(b), pid
	}
	return 0, string(b), pid
}

// bwrapInterplay is the fs-interplay session's evidence of bubblewrap, run as root (its command
// line carries the command, and the trial's directories).
func bwrapInterplay() model.Record {
	const trial = "/tmp/sandcheck-trial-8"
	ev := map[string]any{
		"target": "bwrap", "target_version": "bubblewrap 0.8.0",
		"run": map[string]any{"argv": []string{"/usr/bin/bwrap", "--ro-bind", "/", "/", "--bind", trial + "/fakehome", trial + "/fakehome",
			"--tmpfs", trial + "/fakehome/proj/sub/private", "--ro-bind", "/dev/null", trial + "/fakehome/proj/sub/creds/token",
			"--unshare-net", "--", "/opt/sandcheck", parts.ProbeVerb, trial + "/probe-1.json"}},
		"dir": trial + "/fakehome/proj/sub",
	}
	b, _ := json.Marshal(map[string]any{"bypass/fs-interplay/deny-read-dir": ev})
	return model.Record{Evidence: b}
}

// TestFSScriptArgv: on a sandbox whose command line carries the command, every fs-interplay and
// privilege case gets a script that runs that command line (the trial's directories the
// script's own) with the case's command in the probe's place, and no srt settings.
func TestFSScriptArgv(t *testing.T) {
	for id := range fsCases {
		s, err := Script(bwrapInterplay(), "bypass/"+id, "")
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for _, want := range []string{"SANDBOX=${SANDBOX:-bwrap}", "RUN_AS=${RUN_AS:-root}",
			`inside "$SANDBOX" '--ro-bind' '/' '/' '--bind' ''"$w"'/fakehome' ''"$w"'/fakehome' '--tmpfs' ''"$w"'/fakehome/proj/sub/private'`,
			`'--unshare-net' '--' sh "$w/command.sh"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: script lacks %q", id, want)
			}
		}
		if strings.Contains(s, "/tmp/sandcheck-trial-8") || strings.Contains(s, `"$w/settings.json"`) || strings.Contains(s, parts.ProbeVerb) || strings.Contains(s, "srt") {
			t.Errorf("%s: the trial's directory, srt or its settings, or the probe is left in the script", id)
		}
		f := filepath.Join(t.TempDir(), "r.sh")
		os.WriteFile(f, []byte(s), 0o755)
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", id, err, out)
		}
	}
	if _, err := Script(bwrapInterplay(), "bypass/git/submodule-config", ""); err == nil || !strings.Contains(err.Error(), "srt") {
		t.Errorf("a git case on bwrap: %v, want an error (the git scripts drive srt)", err)
	}
}
