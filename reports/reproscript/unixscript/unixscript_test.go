package unixscript

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	scripttest.Check(t, s, trial, "SANDBOX=${SANDBOX:-bwrap}", "RUN_AS=${RUN_AS:-sandcheck}", `sock=''"$w"'/run/sandcheck-host.sock'`,
		`as "$SANDBOX" '--ro-bind' '/' '/' '--bind' ''"$w"'/workspace' ''"$w"'/workspace' '--unshare-all' '--die-with-parent' '--' python3 -c "$client" "$sock" repro-case`,
		`as python3 -c "$client" "$sock" repro-control`, "parent='/tmp'\n")
	for why, change := range map[string]func(*Trial){
		"fault":    func(tr *Trial) { tr.Broken.Fault = "bridge-absent" },
		"relative": func(tr *Trial) { tr.Socket = "sandcheck.sock" },
		"abstract bridge": func(tr *Trial) {
			tr.Target, tr.Socket, tr.Swap = "srt", "@sandcheck-abc", trial+"/tmp"
		},
		"outside": func(tr *Trial) { tr.Socket = "/run/docker.sock" },
		"no dir":  func(tr *Trial) { tr.Dir = "" },
	} {
		tr := bwrapTrial()
		change(&tr)
		if _, err := Script(tr, "bypass/unix-sockets/host-socket", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestAbstractScript: an abstract socket is a name of the script's own, in the namespace the
// script runs in, which the server binds and the client connects to with a leading NUL.
func TestAbstractScript(t *testing.T) {
	tr := bwrapTrial()
	tr.Socket = "@sandcheck-abc"
	s, err := Script(tr, "bypass/unix-sockets/abstract", "")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, trial, `sock="@repro-$$"`, `s.connect("\0" + p[1:] if p[0] == "@" else p)`, `s.bind("\0" + path[1:])`)
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

// srtTrial is a unix-sockets session of srt: its settings in the trial's directory, the command
// one string after them.
func srtTrial() Trial {
	return Trial{Target: "srt", Version: "@anthropic-ai/sandbox-runtime@0.0.44",
		Argv: []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/opt/srt", "--settings", trial + "/srt-settings.json",
			"-c", "'/opt/sandcheck' '" + parts.ProbeVerb + "' '" + trial + "/probe-1.json'"},
		Settings: []byte(`{"network":{"allowedDomains":[]},"filesystem":{"allowWrite":["` + trial + `/workspace"]}}`),
		Dir:      trial + "/workspace", Socket: trial + "/run/sandcheck-host.sock", Uring: true}
}

// TestUringScript: through io_uring, on srt, the script gives srt the trial's settings (its own
// directory in the trial's place) and the io_uring client as the command, after the same client
// without the sandbox; the client never calls socket(2) or connect(2) itself.
func TestUringScript(t *testing.T) {
	s, err := Script(srtTrial(), "bypass/unix-sockets/uring-host-socket", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"@DIR@/workspace"`, `sed -i "s|@DIR@|$w|g" "$w/settings.json"`, "OP_SOCKET",
		`as "$SANDBOX" --settings "$w/settings.json" -c "python3 $w/client.py $sock repro-case"`, "through io_uring"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(parts.UringPy, "socket.socket") || strings.Contains(parts.UringPy, ".connect(") {
		t.Error("the io_uring client makes its connection the usual way")
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
}

// TestUringClient: the io_uring client reaches a listening socket on this kernel (5.19 or later),
// as the scripts' controls need.
func TestUringClient(t *testing.T) {
	skip.UnlessTools(t, "apt-get install python3", "python3")
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	srv := exec.Command("python3", "-c", server, sock, filepath.Join(dir, "log"))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(dir, "log.ready")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := exec.Command("python3", "-c", parts.UringPy, sock, "hello").CombinedOutput()
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil || !strings.Contains(string(out), "the host's socket answered") || string(log) != "hello\n" {
		t.Fatalf("client: %v: %s; the listener logged %q", err, out, log)
	}
}

// bridgeTrial is a bridge session of srt: the session's TMPDIR (where srt keeps its bridge
// sockets) writable as well as the workspace.
func bridgeTrial() Trial {
	tr := srtTrial()
	tr.Uring, tr.Swap = false, trial+"/tmp"
	tr.Settings = []byte(`{"network":{"allowedDomains":["allowed.sandcheck.test"]},"filesystem":{"allowWrite":["` + trial + `/workspace","` + trial + `/tmp"]}}`)
	return tr
}

// TestBridgeScript: the bridge class's script runs srt with the trial's settings (its own
// directory in the trial's place) in a network namespace of loopback only, on a command that
// swaps the sockets in the session's TMPDIR for links to the script's socket and then asks for
// the allowed host through the proxy; a swap directory outside the trial's, or another sandbox,
// gets none. With a stand-in srt that keeps no sockets and relays nothing, it exits 0.
func TestBridgeScript(t *testing.T) {
	s, err := Script(bridgeTrial(), "bypass/bridge/socket-swap", "unix reached")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, trial, `ip netns add "$net"`, `as() { ip netns exec "$net" setpriv`, `cat > "$w/swap.py"`,
		`-c "python3 $w/swap.py $w/tmp $sock repro-case"`, `"@DIR@/tmp"`)
	for why, change := range map[string]func(*Trial){
		"outside": func(tr *Trial) { tr.Swap = "/tmp/elsewhere" },
		"bwrap":   func(tr *Trial) { *tr = bwrapTrial(); tr.Swap = trial + "/tmp" },
	} {
		tr := bridgeTrial()
		change(&tr)
		if _, err := Script(tr, "bypass/bridge/socket-swap", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
	skip.UnlessRoot(t, "the script runs the sandbox as another account (setpriv) in a network namespace")
	skip.UnlessTools(t, "apt-get install util-linux python3 iproute2", "setpriv", "python3", "ip")
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s+"\n"), 0o755)
	bin := t.TempDir()
	open := filepath.Join(bin, "srt")
	os.WriteFile(open, []byte("#!/bin/sh\n# --settings FILE -c CMD: the command, unconfined, no relay\nexec sh -c \"$4\"\n"), 0o755)
	os.Chmod(bin, 0o755)
	if code, out := scripttest.Run(f, open); code != 0 || !strings.Contains(out, "no bug") {
		t.Errorf("with a stand-in that relays nothing: exit %d, want 0\n%s", code, out)
	}
	if o, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(o), "repro-bridge-") {
		t.Errorf("a network namespace is left: %s", o)
	}
}
