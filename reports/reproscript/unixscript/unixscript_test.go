package unixscript

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

const trial = "/tmp/sandcheck-trial-3"

// bwrapTrial is a unix-sockets session of bubblewrap run as the dedicated account, as the journal
// keeps what a script needs of it.
func bwrapTrial() Trial {
	return Trial{Target: "bwrap", Version: "bubblewrap 0.8.0",
		Argv: []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/usr/bin/bwrap", "--ro-bind", "/", "/",
			"--bind", trial + "/workspace", trial + "/workspace", "--unshare-all", "--die-with-parent", "--",
			"/opt/sandcheck", parts.ProbeVerb, trial + "/probe-1.json"},
		Dir: trial + "/workspace", Socket: trial + "/run/sandcheck-host.sock"}
}

// TestUnixScript: the script is valid sh, makes its socket where the trial's was with its own
// directory in the trial's place, runs the trial's command line with the client last, after a
// control without the sandbox; a fault's finding, an abstract socket and a socket outside the
// trial's directory get none.
func TestUnixScript(t *testing.T) {
	s, err := Script(bwrapTrial(), "bypass/unix-sockets/host-socket", "unix reached")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SANDBOX=${SANDBOX:-bwrap}", "RUN_AS=${RUN_AS:-sandcheck}", `sock=''"$w"'/run/sandcheck-host.sock'`,
		`as "$SANDBOX" '--ro-bind' '/' '/' '--bind' ''"$w"'/workspace' ''"$w"'/workspace' '--unshare-all' '--die-with-parent' '--' python3 -c "$client" "$sock" repro-case`,
		`as python3 -c "$client" "$sock" repro-control`, "parent='/tmp'\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, trial) {
		t.Error("the trial's directory is left in the script")
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	for why, change := range map[string]func(*Trial){
		"fault":    func(tr *Trial) { tr.Fault = "bridge-absent" },
		"abstract": func(tr *Trial) { tr.Socket = "@sandcheck-abc" },
		"outside":  func(tr *Trial) { tr.Socket = "/run/docker.sock" },
		"no dir":   func(tr *Trial) { tr.Dir = "" },
	} {
		tr := bwrapTrial()
		change(&tr)
		if _, err := Script(tr, "bypass/unix-sockets/host-socket", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestUnixScriptDecides runs the script with two stand-ins for the sandbox: one that runs the
// command unconfined must make it exit 1, one that runs nothing exit 0; neither leaves the
// script's directory or its listener behind.
func TestUnixScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account (setpriv)")
	skip.UnlessTools(t, "apt-get install util-linux python3", "setpriv", "python3")
	s, err := Script(bwrapTrial(), "bypass/unix-sockets/host-socket", "")
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
		if left, _ := filepath.Glob("/tmp/repro.*/run/sandcheck-host.sock"); len(left) > 0 {
			t.Errorf("with %s: left %v", filepath.Base(sandbox), left)
		}
		if o, _ := exec.Command("pgrep", "-f", "server.py .*/run/sandcheck-host.sock").Output(); len(o) > 0 {
			t.Errorf("with %s: the listener is still running: %s", filepath.Base(sandbox), o)
		}
	}
}
