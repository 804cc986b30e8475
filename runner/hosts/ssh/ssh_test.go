//go:build linux

package ssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

func newTestSSH(t testing.TB, s *hosttest.SSHD, env map[string]string) *Host {
	t.Helper()
	h, err := New(Config{Name: "lo", Address: s.Addr, KeyFile: s.Key, KnownHosts: []string{s.KnownHosts}, Env: env, KeepAlive: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestSSHExecTimeoutConcurrencyClose(t *testing.T) {
	skip.Short(t, "timeouts and concurrent sessions over a real sshd, about 20 s")
	s := hosttest.StartSSHD(t)
	h := newTestSSH(t, s, map[string]string{"FOO": "bar 'baz'"})
	ctx := context.Background()
	start := time.Now()
	bin, err := h.Prepare(ctx, hosttest.FakeSandcheck(t))
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Logf("prepare (connect, mkdir, sftp, version): %s", time.Since(start))
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 || !strings.Contains(bin, "sandcheck-host-") {
		t.Fatalf("copied binary %s: %v %v", bin, st, err)
	}

	r := h.Exec(ctx, hosts.Cmd("sh", "-c", `echo out; echo "$FOO"; pwd; echo err >&2; exit 3`), 10*time.Second)
	want := fmt.Sprintf("out\nbar 'baz'\n%s\n", filepath.Dir(bin))
	if r.Err != nil || r.TimedOut || r.Exit != 3 || string(r.Stdout) != want || string(r.Stderr) != "err\n" {
		t.Fatalf("exec: %+v\nstdout %q want %q\nstderr %q", r, r.Stdout, want, r.Stderr)
	}
	var overhead []time.Duration
	for range 5 {
		r = h.Exec(ctx, hosts.Cmd(bin, "version"), 10*time.Second)
		if r.Exit != 0 || strings.TrimSpace(string(r.Stdout)) != "sandcheck fake" {
			t.Fatalf("binary: %+v", r)
		}
		overhead = append(overhead, r.Duration)
	}
	t.Logf("per-Exec overhead (session + sh + script): %v", overhead)

	// The deadline kills the process group, and a process that left it (setsid) by its marker.
	pidfile := filepath.Join(t.TempDir(), "pids")
	start = time.Now()
	r = h.Exec(ctx, hosts.Cmd("sh", "-c", `sleep 100 & echo $! >> `+pidfile+`; setsid sleep 101 & echo $! >> `+pidfile+`; sleep 102`), time.Second)
	if !r.TimedOut || r.Err != nil || time.Since(start) > 8*time.Second {
		t.Fatalf("timeout: %+v after %s", r, time.Since(start))
	}
	testwait.Gone(t, 5*time.Second, testwait.Pids(t, pidfile, 2, time.Second)...)

	// A cancelled context ends the trial the same way.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if r = h.Exec(cctx, hosts.Cmd("sleep", "100"), time.Minute); !r.TimedOut {
		t.Fatalf("cancel: %+v", r)
	}

	// Trials share the connection concurrently.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			r := h.Exec(ctx, hosts.Cmd("sh", "-c", fmt.Sprintf("sleep 0.2; echo %d", i)), 20*time.Second)
			if strings.TrimSpace(string(r.Stdout)) != strconv.Itoa(i) || r.Exit != 0 {
				errs <- fmt.Errorf("trial %d: %+v", i, r)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Fatalf("run dir %s still there after Close: %v", filepath.Dir(bin), err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if r := h.Exec(ctx, hosts.Cmd("true"), time.Second); r.Err == nil {
		t.Fatalf("Exec after Close: %+v", r)
	}
}

func TestSSHConnectionLossIsHarnessErrorAndRunGoesOn(t *testing.T) {
	s := hosttest.StartSSHD(t)
	h := newTestSSH(t, s, nil)
	ctx := context.Background()
	if _, err := h.Prepare(ctx, hosttest.FakeSandcheck(t)); err != nil {
		t.Fatal(err)
	}
	e, err := hosts.NewExecutor(h, hosts.Trials{Binary: "unused",
		Argv: func(t runner.Trial, _ string) []string { return []string{"sh", "-c", t.Cell.Labels} },
		Parse: func(runner.Trial, runner.ProcResult) (model.Record, error) {
			return model.Record{Outcome: model.Correct}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	got := make(chan model.Record, 1)
	go func() {
		got <- e.Run(ctx, runner.Trial{Cell: model.Cell{Labels: "echo $$ > " + pidfile + "; exec sleep 60"}, Timeout: 30 * time.Second})
	}()
	orphan := testwait.Pids(t, pidfile, 1, 10*time.Second)[0]
	cut := time.Now()
	s.Kill(true) // every sshd process dies; the remote sleep stays, as after a network cut
	var rec model.Record
	select {
	case rec = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("Exec did not return after the connection died")
	}
	if rec.Outcome != model.HarnessError || !strings.Contains(rec.Error, "lost") {
		t.Fatalf("record after connection loss: %+v", rec)
	}
	t.Logf("connection loss noticed after %s: %s", time.Since(cut), rec.Error)
	if !testwait.Running(orphan) {
		t.Fatalf("the cut-off trial %d should still run on the host until reconnect", orphan)
	}
	// The next trial fails fast while the server is down, then works once it is back, and the
	// reconnect kills what the cut-off trial left.
	if rec := e.Run(ctx, runner.Trial{Cell: model.Cell{Labels: "true"}, Timeout: 5 * time.Second}); rec.Outcome != model.HarnessError {
		t.Fatalf("with sshd down: %+v", rec)
	}
	s.Restart(t)
	if rec := e.Run(ctx, runner.Trial{Cell: model.Cell{Labels: "true"}, Timeout: 5 * time.Second}); rec.Outcome != model.Correct {
		t.Fatalf("after restart: %+v", rec)
	}
	testwait.Gone(t, 5*time.Second, orphan)
}

func TestSSHHostKeyIsChecked(t *testing.T) {
	s := hosttest.StartSSHD(t)
	dir := t.TempDir()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := xssh.NewPublicKey(pub)
	wrong := filepath.Join(dir, "wrong")
	os.WriteFile(wrong, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, xssh.MarshalAuthorizedKey(other))), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	for file, want := range map[string]string{wrong: "HOST KEY MISMATCH", empty: "is not in"} {
		h, err := New(Config{Address: s.Addr, KeyFile: s.Key, KnownHosts: []string{file}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Prepare(context.Background(), hosttest.FakeSandcheck(t))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("known_hosts %s: err = %v, want %q", filepath.Base(file), err, want)
		}
		h.Close()
	}
	if _, err := New(Config{Address: s.Addr, KeyFile: s.Key, KnownHosts: []string{filepath.Join(dir, "missing")}}); err == nil {
		t.Error("a missing known_hosts file must be an error")
	}
}

func TestSSHAgentAuth(t *testing.T) {
	s := hosttest.StartSSHD(t)
	b, _ := os.ReadFile(s.Key)
	key, err := xssh.ParseRawPrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	ring := agent.NewKeyring()
	if err := ring.Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { agent.ServeAgent(ring, c); c.Close() }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("HOME", t.TempDir()) // no ~/.ssh/id_* to fall back on
	h, err := New(Config{Address: s.Addr, KnownHosts: []string{s.KnownHosts}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Prepare(context.Background(), hosttest.FakeSandcheck(t)); err != nil {
		t.Fatalf("agent auth: %v", err)
	}
	// Without the agent there is no key at all: said at construction.
	t.Setenv("SSH_AUTH_SOCK", "")
	if _, err := New(Config{Address: s.Addr, KnownHosts: []string{s.KnownHosts}}); err == nil || !strings.Contains(err.Error(), "key_file:") {
		t.Fatalf("no key: %v", err)
	}
}

// BenchmarkSSH measures the ssh host's setup (connect, run dir, SFTP, version check) and its
// per-trial overhead (a session running `true` under setsid, through the user's login shell).
func BenchmarkSSH(b *testing.B) {
	s := hosttest.StartSSHD(b)
	h := newTestSSH(b, s, nil)
	start := time.Now()
	if _, err := h.Prepare(context.Background(), hosttest.FakeSandcheck(b)); err != nil {
		b.Fatal(err)
	}
	prepare := time.Since(start)
	for b.Loop() {
		if r := h.Exec(context.Background(), hosts.Cmd("true"), 10*time.Second); r.Exit != 0 || r.Err != nil {
			b.Fatalf("%+v", r)
		}
	}
	b.ReportMetric(float64(prepare.Milliseconds()), "prepare-ms")
}

// While a trial runs on the ssh host, no process there holds its key in its command line or
// environment (the host is this machine); the trial still gets it.
func TestSSHTrialKeyInNoCommandLineOrEnvironment(t *testing.T) {
	s := hosttest.StartSSHD(t)
	h := newTestSSH(t, s, nil)
	if _, err := h.Prepare(context.Background(), hosttest.FakeSandcheck(t)); err != nil {
		t.Fatal(err)
	}
	var scan keyscan.Scan
	e, err := hosts.NewExecutor(h, hosts.Trials{Binary: "unused",
		Argv:   func(t runner.Trial, _ string) []string { return keyscan.Argv(t.Key) },
		Parse:  scan.Parse,
		Frames: keyscan.Trials})
	if err != nil {
		t.Fatal(err)
	}
	key := runner.NewKey()
	rec := e.Run(context.Background(), runner.Trial{Key: key, Timeout: time.Minute})
	scan.Check(t, key, rec)
}
