//go:build linux

package wsl

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

func me(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// calls reads the stub's call log: one argv per wsl.exe invocation.
func calls(t *testing.T, log string) [][]string {
	t.Helper()
	b, _ := os.ReadFile(log)
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c struct {
			Args     []string
			WSL_UTF8 string
		}
		if l == "" || json.Unmarshal([]byte(l), &c) != nil {
			continue
		}
		if c.WSL_UTF8 != "1" {
			t.Errorf("wsl.exe called without WSL_UTF8=1: %v", c.Args)
		}
		out = append(out, c.Args)
	}
	return out
}

func TestWSLStubBehavesLikeWSLExe(t *testing.T) {
	exe, _ := hosttest.WSLStub(t)
	out, err := exec.Command(exe, "-d", "Nope", "-e", "true").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 255 {
		t.Fatalf("unknown distro: %v, want exit -1 (255)", err)
	}
	if !looksUTF16LE(out) || !strings.Contains(string(DecodeWSLOutput(out)), "There is no distribution with the supplied name.\nError code: Wsl/Service/WSL_E_DISTRO_NOT_FOUND") {
		t.Fatalf("unknown distro message %q", out)
	}
	out, _ = exec.Command(exe, "-l", "-v").Output()
	if !looksUTF16LE(out) || !strings.Contains(string(DecodeWSLOutput(out)), "* Debian") {
		t.Fatalf("-l -v: %q", out)
	}
	c := exec.Command(exe, "--bogus")
	c.Env = append(os.Environ(), "WSL_UTF8=1")
	out, _ = c.CombinedOutput()
	if looksUTF16LE(out) || !strings.Contains(string(out), "Invalid command line argument: --bogus") {
		t.Fatalf("WSL_UTF8=1: %q", out)
	}
	out, err = exec.Command(exe, "-d", "ubuntu", "--cd", "/", "-e", "sh", "-c", `pwd; echo "$0"; exit 7`, "x y").Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 || string(out) != "/\nx y\n" {
		t.Fatalf("-e: %q %v", out, err)
	}
	out, _ = exec.Command(exe, "--", "echo", "$((6*7))").Output()
	if string(out) != "42\n" {
		t.Fatalf("-- runs through the shell: %q", out)
	}
}

func TestWSLDriverPrepareExecTimeoutClose(t *testing.T) {
	exe, log := hosttest.WSLStub(t)
	// Root "/" plays \\wsl$\Debian: the stand-in's distribution is this machine's filesystem.
	w, err := New(Config{Name: "wsl-debian", Distro: "Debian", User: me(t), Exe: exe, Root: "/", Env: map[string]string{"FOO": "a b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	bin, err := w.Prepare(ctx, hosttest.FakeSandcheck(t))
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if p := w.WindowsPath(bin); p != bin {
		t.Fatalf("WindowsPath(%s) = %s", bin, p)
	}
	r := w.Exec(ctx, hosts.Cmd("sh", "-c", `echo "$FOO"; pwd; echo err >&2; exit 3`), 10*time.Second)
	if r.Err != nil || r.Exit != 3 || string(r.Stdout) != "a b\n"+filepath.Dir(bin)+"\n" || string(r.Stderr) != "err\n" {
		t.Fatalf("exec: %+v stdout %q stderr %q", r, r.Stdout, r.Stderr)
	}
	if r = w.Exec(ctx, hosts.Cmd(bin, "version"), 10*time.Second); r.Exit != 0 || strings.TrimSpace(string(r.Stdout)) != "sandcheck fake" {
		t.Fatalf("binary: %+v", r)
	}
	// A command exiting 255 is the command's exit, not a wsl.exe failure.
	if r = w.Exec(ctx, hosts.Cmd("sh", "-c", "exit 255"), 10*time.Second); r.Err != nil || r.Exit != 255 {
		t.Fatalf("exit 255: %+v", r)
	}
	// The argv of every trial: wsl.exe's grammar, with the run dir and the process-group line.
	cs := calls(t, log)
	last := cs[len(cs)-1]
	if strings.Join(last[:7], " ") != "-d Debian -u "+me(t)+" --cd "+filepath.Dir(bin)+" -e" {
		t.Fatalf("wsl.exe argv: %q", last)
	}

	// The deadline kills the Linux side (which killing wsl.exe would not).
	pidfile := filepath.Join(t.TempDir(), "pids")
	start := time.Now()
	r = w.Exec(ctx, hosts.Cmd("sh", "-c", `sleep 100 & echo $! >> `+pidfile+`; setsid sleep 101 & echo $! >> `+pidfile+`; sleep 102`), time.Second)
	if !r.TimedOut || r.Err != nil || time.Since(start) > 8*time.Second {
		t.Fatalf("timeout: %+v after %s", r, time.Since(start))
	}
	testwait.Gone(t, 5*time.Second, testwait.Pids(t, pidfile, 2, time.Second)...)

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Fatalf("run dir left: %v", err)
	}
}

func TestWSLFailuresAreHarnessErrorsInPlainText(t *testing.T) {
	exe, _ := hosttest.WSLStub(t)
	for _, ignore := range []string{"", "1"} { // "1": an old wsl.exe answering in UTF-16LE anyway
		t.Setenv("WSLSTUB_IGNORE_UTF8", ignore)
		w, _ := New(Config{Distro: "Fedora", User: me(t), Exe: exe})
		_, err := w.Prepare(context.Background(), hosttest.FakeSandcheck(t))
		if err == nil || !strings.Contains(err.Error(), "There is no distribution with the supplied name.") {
			t.Errorf("ignore=%q: Prepare on an unknown distro: %v", ignore, err)
		}
		r := w.Exec(context.Background(), hosts.Cmd("true"), 5*time.Second)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "WSL_E_DISTRO_NOT_FOUND") || strings.ContainsRune(r.Err.Error(), 0) {
			t.Errorf("ignore=%q: Exec on an unknown distro: %+v", ignore, r)
		}
	}
	w, _ := New(Config{Distro: "Debian", User: "no-such-user-sandcheck", Exe: exe})
	if r := w.Exec(context.Background(), hosts.Cmd("true"), 5*time.Second); r.Err == nil || !strings.Contains(r.Err.Error(), "getpwnam") {
		t.Errorf("unknown user: %+v", r)
	}
	w, _ = New(Config{Distro: "Debian", Exe: filepath.Join(t.TempDir(), "absent.exe")})
	if r := w.Exec(context.Background(), hosts.Cmd("true"), 5*time.Second); r.Err == nil {
		t.Errorf("missing wsl.exe: %+v", r)
	}
	if _, err := New(Config{Distro: "Debian", Cold: "sometimes"}); err == nil {
		t.Error("bad cold-start mode accepted")
	}
}

func TestWSLColdStartShutsDownFirst(t *testing.T) {
	exe, log := hosttest.WSLStub(t)
	t.Setenv("WSLSTUB_DELAY", "400ms") // a stopped distribution takes this long to start
	run := func(cold string) (durs []time.Duration, shutdowns int) {
		os.Remove(log)
		// Streamed copy (no Root): the binary goes through wsl.exe's stdin.
		w, err := New(Config{Distro: "Debian", User: me(t), Exe: exe, Cold: cold})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Prepare(context.Background(), hosttest.FakeSandcheck(t)); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r := w.Exec(context.Background(), hosts.Cmd("true"), 10*time.Second)
			if r.Err != nil || r.Exit != 0 {
				t.Fatalf("cold=%q: %+v", cold, r)
			}
			durs = append(durs, r.Duration)
		}
		for _, c := range calls(t, log) {
			if len(c) == 1 && c[0] == "--shutdown" {
				shutdowns++
			}
		}
		return durs, shutdowns
	}
	if d, n := run(ColdEvery); n != 3 || d[1] < 400*time.Millisecond || d[2] < 400*time.Millisecond {
		t.Errorf("every: %d shutdowns, durations %v", n, d)
	}
	if d, n := run(ColdFirst); n != 1 || d[0] < 400*time.Millisecond || d[2] > 400*time.Millisecond {
		t.Errorf("first: %d shutdowns, durations %v", n, d)
	}
	if d, n := run(ColdNone); n != 0 || d[0] > 400*time.Millisecond {
		t.Errorf("warm: %d shutdowns, durations %v", n, d)
	}
}

func TestDecodeWSLOutput(t *testing.T) {
	wide := func(s string, bom bool) []byte {
		var b []byte
		if bom {
			b = []byte{0xFF, 0xFE}
		}
		for _, c := range utf16.Encode([]rune(s)) {
			b = append(b, byte(c), byte(c>>8))
		}
		return b
	}
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{wide("Installing: Ümlaut\r\nok\r\n", false), "Installing: Ümlaut\nok\n"},
		{wide("x", true), "x"},
		{[]byte("plain UTF-8 ü\r\n"), "plain UTF-8 ü\r\n"},
		{[]byte("SANDCHECK-TRIAL-RESULT {}\n"), "SANDCHECK-TRIAL-RESULT {}\n"},
		{[]byte{0, 0, 1, 0}, "\x00\x00\x01\x00"}, // binary: left alone
		{nil, ""},
	} {
		if got := string(DecodeWSLOutput(c.in)); got != c.want {
			t.Errorf("DecodeWSLOutput(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// While a trial runs in the distribution, no process there holds its key in its command line or
// environment (the stand-in's distribution is this machine), nor does wsl.exe's command line on
// the Windows side; the trial still gets the key.
func TestWSLTrialKeyInNoCommandLineOrEnvironment(t *testing.T) {
	exe, log := hosttest.WSLStub(t)
	w, err := New(Config{Distro: "Debian", User: me(t), Exe: exe, Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Prepare(context.Background(), hosttest.FakeSandcheck(t)); err != nil {
		t.Fatal(err)
	}
	var scan keyscan.Scan
	e, err := hosts.NewExecutor(w, hosts.Trials{Binary: "unused",
		Argv:   func(t runner.Trial, _ string) []string { return keyscan.Argv(t.Key) },
		Parse:  scan.Parse,
		Frames: keyscan.Trials})
	if err != nil {
		t.Fatal(err)
	}
	key := runner.NewKey()
	rec := e.Run(context.Background(), runner.Trial{Key: key, Timeout: time.Minute})
	scan.Check(t, key, rec)
	for _, c := range calls(t, log) {
		if strings.Contains(strings.Join(c, " "), key) {
			t.Errorf("wsl.exe's command line holds the key: %q", c)
		}
	}
}
