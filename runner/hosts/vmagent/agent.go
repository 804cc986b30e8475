//go:build linux

package vmagent

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/internal/procfs"

	"golang.org/x/sys/unix"
)

// freshDirs are the directories every job gets empty (tmpfs, with these modes), so no trial sees
// what an earlier trial of the same boot left there.
var freshDirs = []struct{ path, mode string }{{"/tmp", "1777"}, {"/var/tmp", "1777"}, {"/root", "0700"}}

// JobPrelude mounts freshDirs in the job's own mount namespace and runs the job: how an agent
// that does not own its machine (a test on the host) gives a job fresh directories. In the
// guest the agent mounts them itself before each job (no shell, no mount processes: each costs
// a fork and an exec, slow under emulation) and the job still gets a namespace of its own, so
// what it mounts goes with it.
const JobPrelude = `mount -t tmpfs -o mode=1777 sc-tmp /tmp && mount -t tmpfs -o mode=1777 sc-tmp /var/tmp && ` +
	`mount -t tmpfs -o mode=0700 sc-home /root && cd /root && exec "$@"`

// remountFresh replaces freshDirs with empty tmpfs mounts in the agent's own namespace; the
// previous job's are detached (and freed once nothing holds them).
func remountFresh() error {
	for _, d := range freshDirs {
		_ = unix.Unmount(d.path, unix.MNT_DETACH) // not mounted yet: nothing to detach
		if err := unix.Mount("sc-job", d.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+d.mode); err != nil {
			return fmt.Errorf("fresh %s: %w", d.path, err)
		}
	}
	return nil
}

// KillGrace is how long a job past its deadline gets between SIGTERM and SIGKILL.
const KillGrace = 3 * time.Second

// MaybeRun runs the agent and exits when argv asks for it: `BIN __sandcheck_vm_agent TTY
// NONCE-FILE`. Binaries that go into the guest call it first thing.
func MaybeRun() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintf(os.Stderr, "usage: %s %s TTY NONCE-FILE\n", os.Args[0], Arg)
		os.Exit(2)
	}
	os.Exit(Main(os.Args[2], os.Args[3]))
}

// Main serves jobs on the serial port tty until told to quit or the port fails.
func Main(tty, nonceFile string) int {
	nb, err := os.ReadFile(nonceFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vm agent: %v\n", err)
		return 1
	}
	f, err := os.OpenFile(tty, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vm agent: %v\n", err)
		return 1
	}
	defer f.Close()
	if err := makeRaw(int(f.Fd())); err != nil {
		fmt.Fprintf(os.Stderr, "vm agent: %s: %v\n", tty, err)
		return 1
	}
	// Orphans of a job (a daemonised helper) come to us, so we can reap them once it ends.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// The guest is ours: fresh directories are mounted here, before each job.
	a := &agent{nonce: strings.TrimSpace(string(nb)), w: f, ownsMachine: true}
	return a.serve(bufio.NewReaderSize(f, 64<<10))
}

// makeRaw turns off every line discipline: frames are bytes, not terminal input.
func makeRaw(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CBAUD
	t.Cflag |= unix.CS8 | unix.B115200
	t.Ispeed, t.Ospeed = unix.B115200, unix.B115200
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

type agent struct {
	nonce string
	mu    sync.Mutex // one frame at a time on the port, whole
	w     io.Writer
	// ownsMachine: the agent is alone on its machine (the guest) and mounts each job's fresh
	// directories in its own namespace; else the job does, in its own (JobPrelude).
	ownsMachine bool
}

func (a *agent) send(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = io.WriteString(a.w, line)
}

func (a *agent) logf(format string, args ...any) {
	a.send(LogLine(a.nonce, fmt.Sprintf(format, args...)))
}

func (a *agent) serve(r *bufio.Reader) int {
	a.send(ReadyLine(a.nonce))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Fprintf(os.Stderr, "vm agent: read: %v\n", err)
			return 1
		}
		f, ok, err := Parse(line, a.nonce)
		switch {
		case err != nil:
			a.logf("%v", err)
			continue
		case !ok:
			continue
		}
		switch f.Kind {
		case Quit:
			return 0
		case JobF:
			code, timedOut := a.run(f.ID, f.Timeout, f.Job)
			a.send(ExitLine(a.nonce, f.ID, code, timedOut))
			a.send(ReadyLine(a.nonce))
		}
	}
}

// run runs one job to its end or its deadline, streaming its output, and leaves nothing of it
// running.
func (a *agent) run(id int, timeout time.Duration, j Job) (code int, timedOut bool) {
	cookie := randomHex(16)
	argv := append([]string{"/bin/sh", "-c", JobPrelude, "sc-job"}, j.Argv...)
	dir := "/"
	if a.ownsMachine {
		if err := remountFresh(); err != nil {
			a.send(ChunkLine(Err, a.nonce, id, []byte("vm agent: "+err.Error()+"\n")))
			return -1, false
		}
		argv, dir = j.Argv, "/root"
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), j.Env...), CookieVar+"="+cookie)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Unshareflags: syscall.CLONE_NEWNS}
	// Our own pipes: Wait would block on a grandchild holding them, and we kill first.
	outR, outW, err := os.Pipe()
	if err != nil {
		a.logf("job %d: %v", id, err)
		return -1, false
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		a.logf("job %d: %v", id, err)
		return -1, false
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if j.Stdin != nil {
		cmd.Stdin = bytes.NewReader(j.Stdin) // a few bytes: copied into the pipe at once
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		a.send(ChunkLine(Err, a.nonce, id, []byte("vm agent: start job: "+err.Error()+"\n")))
		return -1, false
	}
	pgid := cmd.Process.Pid
	var streams sync.WaitGroup
	stream := func(kind string, r io.Reader) {
		buf := make([]byte, 16<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				a.send(ChunkLine(kind, a.nonce, id, buf[:n]))
			}
			if err != nil {
				return
			}
		}
	}
	streams.Go(func() { stream(Out, outR) })
	streams.Go(func() { stream(Err, errR) })

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	select {
	case err = <-waited:
		timer.Stop()
	case <-timer.C:
		timedOut = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-waited:
		case <-time.After(KillGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-waited
		}
	}
	// Whatever is left of the job: its group, and every process carrying its cookie.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	KillEnv(CookieVar, cookie)
	drained := make(chan struct{})
	go func() { streams.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second): // a process that escaped both still holds a pipe
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	reap()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), timedOut
	case err != nil:
		return -1, timedOut
	}
	return 0, timedOut
}

// reap collects the exit status of orphans the job left to us (we are their subreaper).
func reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// KillEnv SIGKILLs every process whose environment holds name=value, in rounds until none is
// left (a dying parent may fork once more), reaping between rounds, and returns how many it killed.
func KillEnv(name, value string) int {
	return procfs.KillEnv(name+"="+value, 5, reap)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
