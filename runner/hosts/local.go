//go:build linux

package hosts

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
)

func init() {
	Register(matrix.KindLocal, func(h matrix.Host) (Host, error) { return NewLocal(h.Name), nil })
}

// Local runs trials as child processes of the runner on this machine, each in its own process
// group so a deadline kills the trial with everything it started.
type Local struct{ name string }

// NewLocal returns the local host under the matrix name name ("local" if empty).
func NewLocal(name string) *Local {
	if name == "" {
		name = "local"
	}
	return &Local{name: name}
}

// Name implements Host.
func (l *Local) Name() string { return l.name }

// Prepare implements Host: the runner's own binary serves.
func (l *Local) Prepare(_ context.Context, bin string) (string, error) { return bin, nil }

// Isolation implements Host.
func (l *Local) Isolation() string { return "process group per trial" }

// Exec implements Host.
func (l *Local) Exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return Result{Exit: -1, Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	r := Result{}
	select {
	case err = <-done:
	case <-ctx.Done():
		r.TimedOut = true
	case <-t.C:
		r.TimedOut = true
	}
	if r.TimedOut {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(3 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		r.Exit = -1
	}
	r.Stdout, r.Stderr, r.Duration = stdout.Bytes(), stderr.Bytes(), time.Since(start)
	return r
}

// Close implements Host.
func (l *Local) Close() error { return nil }
