//go:build linux

package hosts

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/trialresult"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// shellHost is an Execer on this machine, as simple as a remote host looks to the executor: a
// process group per command, killed on the deadline. seen, when set, gets the last command;
// tail, when set, is how much of stdout it hands back (the end, as the container host does).
type shellHost struct {
	seen *Command
	tail int
}

func (shellHost) Name() string                                    { return "shell" }
func (shellHost) Isolation() string                               { return "process group (test)" }
func (shellHost) Prepare(context.Context, string) (string, error) { return "sh", nil }
func (shellHost) Close() error                                    { return nil }

func (h shellHost) Exec(ctx context.Context, c Command, timeout time.Duration) Result {
	if h.seen != nil {
		*h.seen = c
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if c.Stdout != nil {
		cmd.Stdout = io.MultiWriter(&stdout, c.Stdout)
	}
	if err := cmd.Start(); err != nil {
		return Result{Exit: -1, Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r := Result{}
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		r.TimedOut = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Exit = ee.ExitCode()
	}
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.Bytes()
	if h.tail > 0 && len(r.Stdout) > h.tail {
		r.Stdout = r.Stdout[len(r.Stdout)-h.tail:]
	}
	return r
}

func shellExecutor(t *testing.T, h shellHost, parse func(runner.Trial, runner.ProcResult) (model.Record, error)) runner.Executor {
	t.Helper()
	e, err := NewExecutor(h, Trials{Binary: "sh",
		Argv:  func(t runner.Trial, bin string) []string { return []string{bin, "-c", t.Cell.Labels} },
		Parse: parse})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestExecutorMapsHostResults(t *testing.T) {
	e := shellExecutor(t, shellHost{}, func(_ runner.Trial, res runner.ProcResult) (model.Record, error) {
		return model.Record{Outcome: model.Outcome(strings.TrimSpace(string(res.Stdout)))}, nil
	})
	run := func(script string, timeout time.Duration) model.Record {
		return e.Run(context.Background(), runner.Trial{Cell: model.Cell{Labels: script}, Timeout: timeout})
	}
	if r := run("echo correct", 5*time.Second); r.Outcome != model.Correct || r.Isolation != "process group (test)" {
		t.Fatalf("pass-through: %+v", r)
	}
	if r := run("sleep 5", 100*time.Millisecond); r.Outcome != model.Timeout {
		t.Fatalf("timeout: %+v", r)
	}
}

// The trial's key reaches the trial process on its stdin (not in its arguments or environment),
// and what parse finds past a deadline is kept when it is a fail-open.
func TestExecutorPassesKeyAndKeepsFailOpenPastDeadline(t *testing.T) {
	var seen Command
	e := shellExecutor(t, shellHost{seen: &seen}, func(_ runner.Trial, res runner.ProcResult) (model.Record, error) {
		if strings.Contains(string(res.Stdout), "egress") {
			return model.Record{Outcome: model.NonEnforcing, Egress: []string{"denied http /x"}}, nil
		}
		return model.Record{Outcome: model.Correct, Hint: strings.TrimSpace(string(res.Stdout))}, nil
	})
	tr := runner.Trial{Cell: model.Cell{Labels: `[ "$` + runner.EnvResultKeyFD + `" = 0 ] && read -r k && echo "$k"`}, Timeout: 5 * time.Second, Key: "k123"}
	if r := e.Run(context.Background(), tr); r.Hint != "k123" || strings.Contains(strings.Join(seen.Argv, " "), "k123") || string(seen.Stdin) != "k123\n" {
		t.Fatalf("key: record %+v, command %q", r, seen)
	}
	tr.Cell.Labels, tr.Timeout = "echo egress; sleep 5", 300*time.Millisecond
	r := e.Run(context.Background(), tr)
	if r.Outcome != model.NonEnforcing || !r.TimedOut || len(r.Egress) != 1 || !strings.Contains(r.Error, "deadline") {
		t.Fatalf("egress then deadline: %+v", r)
	}
	tr.Cell.Labels = "sleep 5"
	if r := e.Run(context.Background(), tr); r.Outcome != model.Timeout || !r.TimedOut {
		t.Fatalf("deadline without evidence: %+v", r)
	}
}

func TestUnknownKindNamesAvailable(t *testing.T) {
	Register(Kind{Name: "shell", New: func(matrix.Host, Options) (Host, error) { return shellHost{}, nil }})
	defer func() { mu.Lock(); delete(kinds, "shell"); mu.Unlock() }()
	_, err := New(matrix.Host{Name: "x", Kind: "teleport"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "available: shell") {
		t.Fatalf("err = %v", err)
	}
	if h, err := New(matrix.Host{Name: "x", Kind: "shell"}, Options{}); err != nil || h.Name() != "shell" {
		t.Fatalf("New: %v %v", h, err)
	}
}

// While a trial runs on an Execer, no process's command line or environment holds its key (the
// host here is this machine); the trial still gets it.
func TestExecutorKeyInNoCommandLineOrEnvironment(t *testing.T) {
	var scan keyscan.Scan
	e, err := NewExecutor(shellHost{}, Trials{Binary: "sh",
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

// A host that hands back only the end of a trial's stdout still yields the trial's keyed frames
// from before a flood: a denied hit, then megabytes of output, is non-enforcing.
func TestExecutorKeepsFramesAHostsTailWouldLose(t *testing.T) {
	var hit bytes.Buffer
	frame.EmitEgress(&hit, "KEY", model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/http/early", From: "198.18.0.2:4711"})
	script := `read -r key; printf '%s\n' "$(echo '` + strings.TrimSpace(hit.String()) + `' | sed "s/KEY/$key/")"
yes 'SANDCHECK-EGRESS {"role":"allowed"}' | head -c 300000; echo`
	e, err := NewExecutor(shellHost{tail: 64 << 10}, Trials{Binary: "sh",
		Argv:   func(runner.Trial, string) []string { return []string{"sh", "-c", script} },
		Parse:  trialresult.Parse,
		Frames: trialresult.Prefixes})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Run(context.Background(), runner.Trial{Key: runner.NewKey(), Timeout: time.Minute})
	if r.Outcome != model.NonEnforcing || len(r.Egress) != 1 || !strings.Contains(r.Egress[0], "/http/early") {
		t.Fatalf("a keyed denied hit before a flood: %+v", r)
	}
}
