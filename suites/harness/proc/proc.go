//go:build linux

// Package proc runs one command of a trial: in its own process group, under private bind mounts
// when asked, with a deadline, and kills everything it started (the group and every process
// carrying the trial's cookie) when it ends.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/procfs"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
)

// CookieVar marks every process a trial starts. Sandboxes start their children in new sessions
// (bwrap --new-session) and helpers may daemonise, so a process group is not enough to find
// them all; the environment cookie is inherited by all of them.
const CookieVar = "SANDCHECK_TRIAL_COOKIE"

// Run is a finished sandboxed command.
type Run struct {
	Argv []string `json:"argv"`
	// Mounts are the binds the command ran under, in a mount namespace of its own (the fixture
	// names' hosts file, a read-only HOME, ...): "SRC on DST" (", ro").
	Mounts   []string      `json:"mounts,omitempty"`
	Exit     int           `json:"exit"`
	Stdout   []byte        `json:"-"`
	Stderr   string        `json:"stderr,omitempty"` // tail
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

const stderrTail = 8 << 10

// Bind is a bind mount in the sandbox's private mount namespace.
type Bind struct {
	Src, Dst string
	RO       bool
	// Overlay lays Src's contents over the directory Dst (overlayfs, Src the upper layer) instead
	// of replacing it: files added under a system directory (/etc/claude-code/...) for this run
	// only, the host's own directory untouched.
	Overlay bool
	// Tmpfs, a size ("128m"), mounts a tmpfs that size on Dst instead (Src unused): a writable
	// path whose room the trial bounds, gone with the namespace.
	Tmpfs string
}

// describe is the bind as a run's Mounts list it.
func (b Bind) describe() string {
	if b.Tmpfs != "" {
		return "tmpfs on " + b.Dst + ", size " + b.Tmpfs
	}
	m := b.Src + " on " + b.Dst
	if b.RO {
		m += ", ro"
	}
	if b.Overlay {
		m += ", overlay"
	}
	return m
}

// Setup adjusts how a sandboxed command starts: where (an isolated fixture's host namespace)
// and with which terminal. The zero value starts it here, with no terminal.
type Setup struct {
	Start func(*exec.Cmd) error // nil: cmd.Start
	// TTY becomes the command's stdin and controlling terminal, in a session of its own (whose
	// leader also leads its process group, so the group kill still reaches it).
	TTY *os.File
}

// RunCommand runs argv in its own process group with a deadline, under binds when there are any
// (startUnder). On expiry the group gets SIGTERM and grace to exit (a sandbox cleans up after
// itself), then SIGKILL; and always after it ends, the whole group and every process carrying
// cookie are killed: nothing a trial starts outlives it.
func RunCommand(ctx context.Context, argv, env []string, dir, cookie string, timeout, grace time.Duration, binds ...Bind) Run {
	return RunCommandIn(ctx, Setup{}, argv, env, dir, cookie, timeout, grace, binds...)
}

// RunCommandIn is RunCommand started as setup says.
func RunCommandIn(ctx context.Context, setup Setup, argv, env []string, dir, cookie string, timeout, grace time.Duration, binds ...Bind) Run {
	r := Run{Argv: argv}
	for _, b := range binds {
		r.Mounts = append(r.Mounts, b.describe())
	}
	if timeout <= 0 {
		// The trial budget is spent: starting the sandbox now would only be killed mid-run.
		r.TimedOut, r.Exit, r.Stderr = true, -1, "sandcheck: trial budget spent before the sandbox could start"
		return r
	}
	if setup.Start != nil {
		argv = wrapMounts(argv, binds)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, env...), CookieVar+"="+cookie)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if setup.TTY != nil {
		cmd.Stdin = setup.TTY
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	ended := make(chan struct{})
	defer close(ended)
	var err error
	if setup.Start != nil {
		// Started from an isolated fixture's namespace thread: the binds come from a wrapper
		// process there (that thread must not change its own mount namespace).
		err = setup.Start(cmd)
	} else {
		err = startUnder(cmd, binds, ended)
	}
	if err != nil {
		r.Exit, r.Stderr = -1, err.Error()
		return r
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = nil
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
	phases.Add(phases.Sandbox, r.Duration)
	defer phases.Time(phases.Cleanup)()
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

// startUnder starts cmd in a private mount namespace holding binds: made by an OS thread of
// this process for itself alone (unshare of its fs and mount namespace), which then forks the
// command, so the command is born in it. The thread is never handed back to the Go scheduler
// (it exits with its goroutine), and nothing else of this process sees the mounts; when the
// command's last process ends the namespace goes. No unshare, shell or mount processes: they
// cost ~13 ms a trial here, and far more under emulation.
//
// The thread lives until ended is closed (the command has ended). For PR_SET_PDEATHSIG the
// forking thread is the command's parent: bwrap --die-with-parent, exec'd in place as the
// command, was SIGKILLed when the thread exited after bwrap had armed it, a race won about
// once in 20 trials ("SANDBOX-RAN marker missing (exit -1, no message)").
func startUnder(cmd *exec.Cmd, binds []Bind, ended <-chan struct{}) error {
	if len(binds) == 0 {
		return cmd.Start()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		err := func() error {
			if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("private mount namespace: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return fmt.Errorf("private mount namespace: %w", err)
			}
			for _, b := range binds {
				if b.Tmpfs != "" {
					if err := unix.Mount("tmpfs", b.Dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+b.Tmpfs+",mode=1777"); err != nil {
						return fmt.Errorf("tmpfs on %s: %w", b.Dst, err)
					}
					continue
				}
				if b.Overlay {
					if err := overlay(b); err != nil {
						return err
					}
					continue
				}
				if err := unix.Mount(b.Src, b.Dst, "", unix.MS_BIND, ""); err != nil {
					return fmt.Errorf("bind %s on %s: %w", b.Src, b.Dst, err)
				}
				if b.RO {
					if err := unix.Mount("", b.Dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
						return fmt.Errorf("bind %s read-only: %w", b.Dst, err)
					}
				}
			}
			return cmd.Start()
		}()
		done <- err
		if err == nil {
			<-ended
		}
	}()
	return <-done
}

// overlay lays b.Src over the directory b.Dst (Src the upper layer, its work directory beside it):
// files added under a system directory for this run only, the host's directory untouched.
func overlay(b Bind) error {
	work := b.Src + ".work"
	if err := os.MkdirAll(work, 0o700); err != nil {
		return fmt.Errorf("overlay on %s: %w", b.Dst, err)
	}
	opts := "lowerdir=" + b.Dst + ",upperdir=" + b.Src + ",workdir=" + work
	if err := unix.Mount("overlay", b.Dst, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay %s on %s: %w", b.Src, b.Dst, err)
	}
	return nil
}

// KillCookie SIGKILLs every process whose environment carries the cookie, and returns how many.
func KillCookie(cookie string) int {
	if cookie == "" {
		return 0
	}
	return procfs.KillEnv(CookieVar+"="+cookie, 3, nil)
}

// wrapMounts runs argv in a private mount namespace with the given binds (the fixture names,
// a read-only HOME...). The mounts vanish with the namespace; this host is untouched.
// (`unshare --propagation private` has made every mount private already.)
func wrapMounts(argv []string, binds []Bind) []string {
	if len(binds) == 0 {
		return argv
	}
	script := []string{"set -e"}
	args := []string{}
	for _, b := range binds {
		if b.Tmpfs != "" {
			args = append(args, b.Dst)
			script = append(script, fmt.Sprintf(`mount -t tmpfs -o nosuid,nodev,size=%s,mode=1777 tmpfs "${%d}"`, b.Tmpfs, len(args)))
			continue
		}
		src, dst := fmt.Sprintf(`"${%d}"`, len(args)+1), fmt.Sprintf(`"${%d}"`, len(args)+2)
		args = append(args, b.Src, b.Dst)
		if b.Overlay {
			work := fmt.Sprintf(`"${%d}"`, len(args)+1)
			args = append(args, b.Src+".work")
			script = append(script, "mkdir -p "+work, "mount -t overlay overlay -o lowerdir="+dst+",upperdir="+src+",workdir="+work+" "+dst)
			continue
		}
		script = append(script, "mount --bind "+src+" "+dst)
		if b.RO {
			script = append(script, "mount -o remount,bind,ro "+dst)
		}
	}
	script = append(script, fmt.Sprintf("shift %d", len(args)), `exec "$@"`)
	out := []string{"unshare", "--mount", "--propagation", "private", "--", "sh", "-c", strings.Join(script, "\n"), "sandcheck-mounts"}
	out = append(out, args...)
	return append(out, argv...)
}
