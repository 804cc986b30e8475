package signalscript

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

const trial = "/tmp/sandcheck-trial-4"

// bwrapTrial is a side-channels session of bubblewrap run as the dedicated account, as the
// journal keeps what a script needs of it.
func bwrapTrial() Trial {
	return Trial{Target: "bwrap", Version: "bubblewrap 0.8.0",
		Argv: []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/usr/bin/bwrap", "--unshare-all", "--ro-bind", "/", "/",
			"--bind", trial + "/workspace", trial + "/workspace", "--", "/opt/sandcheck", parts.ProbeVerb, trial + "/probe-1.json"},
		Dir: trial + "/workspace"}
}

// TestSignalScript: the script is valid sh, runs the trial's command line with the killer last,
// after the same kill without the sandbox; a fault's finding, srt and a trial without its
// working directory get none.
func TestSignalScript(t *testing.T) {
	s, err := Script(bwrapTrial(), "bypass/signals/kill-outside", "sentinel reached")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, trial, "SANDBOX=${SANDBOX:-bwrap}", "RUN_AS=${RUN_AS:-sandcheck}",
		`as "$SANDBOX" '--unshare-all' '--ro-bind' '/' '/' '--bind' ''"$w"'/workspace' ''"$w"'/workspace' '--' python3 -c "$killer" "$marker"`,
		`( cd "$ws" && as python3 -c "$killer" "$marker" )`)
	for why, change := range map[string]func(*Trial){
		"fault":  func(tr *Trial) { tr.Broken.Fault = "bridge-absent" },
		"srt":    func(tr *Trial) { tr.Target = "srt" },
		"no dir": func(tr *Trial) { tr.Dir = "" },
	} {
		tr := bwrapTrial()
		change(&tr)
		if _, err := Script(tr, "bypass/signals/kill-outside", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestSignalScriptDecides runs the script with two stand-ins for the sandbox: one that runs the
// command unconfined must make it exit 1, one that runs nothing exit 0; neither leaves its
// victim or its directory behind.
func TestSignalScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs its victim and the sandbox as another account (setpriv)")
	skip.UnlessTools(t, "apt-get install util-linux python3 procps", "setpriv", "python3", "pgrep")
	s, err := Script(bwrapTrial(), "bypass/signals/kill-outside", "")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s+"\n"), 0o755)
	open, none := scripttest.ArgvStandIns(t)
	for sandbox, want := range map[string]int{open: 1, none: 0} {
		if code, out := scripttest.Run(f, sandbox); code != want {
			t.Errorf("with %s: exit %d, want %d\n%s", filepath.Base(sandbox), code, want, out)
		}
		if o, _ := exec.Command("pgrep", "-f", "victim:repro-victim-").Output(); len(o) > 0 {
			t.Errorf("with %s: a victim is still running: %s", filepath.Base(sandbox), o)
		}
		if left, _ := filepath.Glob("/tmp/repro.*/killer.py"); len(left) > 0 {
			t.Errorf("with %s: left %v", filepath.Base(sandbox), left)
		}
	}
}
