//go:build linux

package harness

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// CookieVar marks every process a trial starts. Sandboxes start their children in new sessions
// (bwrap --new-session) and helpers may daemonise, so a process group is not enough to find
// them all; the environment cookie is inherited by all of them.
const CookieVar = "SANDCHECK_TRIAL_COOKIE"

// Run is a finished sandboxed command.
type Run struct {
	Argv     []string      `json:"argv"`
	Exit     int           `json:"exit"`
	Stdout   []byte        `json:"-"`
	Stderr   string        `json:"stderr,omitempty"` // tail
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

const stderrTail = 8 << 10

// runCommand runs argv in its own process group with a deadline. On expiry the group gets SIGTERM
// and grace to exit (a sandbox cleans up after itself), then SIGKILL; and always after it ends,
// the whole group and every process carrying cookie are killed: nothing a trial starts outlives it.
func runCommand(ctx context.Context, argv, env []string, dir, cookie string, timeout, grace time.Duration) Run {
	r := Run{Argv: argv}
	if timeout <= 0 {
		// The trial budget is spent: starting the sandbox now would only be killed mid-run.
		r.TimedOut, r.Exit, r.Stderr = true, -1, "sandcheck: trial budget spent before the sandbox could start"
		return r
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, env...), CookieVar+"="+cookie)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Exit, r.Stderr = -1, err.Error()
		return r
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		r.TimedOut = true
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(grace):
			syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
	}
	r.Duration = time.Since(start)
	AddPhase(PhaseSandbox, r.Duration)
	defer timePhase(PhaseCleanup)()
	syscall.Kill(-pgid, syscall.SIGKILL)
	KillCookie(cookie)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		r.Exit = -1
	}
	r.Stdout = stdout.Bytes()
	s := stderr.String()
	if len(s) > stderrTail {
		s = "…" + s[len(s)-stderrTail:]
	}
	r.Stderr = s
	return r
}

// KillCookie SIGKILLs every process whose environment carries the cookie, and returns how many.
func KillCookie(cookie string) int {
	if cookie == "" {
		return 0
	}
	return procfs.KillEnv(CookieVar+"="+cookie, 3, nil)
}
