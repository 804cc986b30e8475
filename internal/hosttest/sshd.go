//go:build linux

package hosttest

// A throwaway sshd for tests: Debian's sshd (installed if missing, by
// scripts/sshd-throwaway.sh) on 127.0.0.1 with fresh host and user keys, killed with every
// per-connection sshd when the test ends. The ssh host driver's tests and the e2e tests share it.

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// SSHD is a running throwaway sshd.
type SSHD struct {
	Addr, Dir       string // 127.0.0.1:PORT; the directory of its keys and logs
	Key, KnownHosts string // the user's private key and a known_hosts that trusts the host key
	Port            int
	script          string
	cmd             *exec.Cmd
}

// StartSSHD starts the throwaway sshd (scripts/sshd-throwaway.sh). It skips the test loudly
// when no sshd can be had on this machine.
func StartSSHD(t testing.TB) *SSHD {
	t.Helper()
	script := filepath.Join(RepoRoot(t), "scripts", "sshd-throwaway.sh")
	s := &SSHD{Dir: t.TempDir(), Port: freePort(t), script: script}
	s.Addr = fmt.Sprintf("127.0.0.1:%d", s.Port)
	s.Key, s.KnownHosts = filepath.Join(s.Dir, "id_ed25519"), filepath.Join(s.Dir, "known_hosts")
	s.Restart(t)
	t.Cleanup(func() { s.Kill(false) })
	return s
}

// Restart starts sshd again on the same port with the same keys (after Kill).
func (s *SSHD) Restart(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command(s.script, s.Dir, strconv.Itoa(s.Port))
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &log, &log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second) // includes installing openssh-server
	for {
		if c, err := net.Dial("tcp", s.Addr); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			sshdLog, _ := os.ReadFile(filepath.Join(s.Dir, "sshd.log"))
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
				skip.Missing(t, "no sshd for the ssh host tests: %s", log.String())
			}
			t.Fatalf("sshd exited: %v\n%s%s", err, log.String(), sshdLog)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("sshd did not listen in 90s")
		}
	}
}

// Kill ends the sshd processes: the listener and, through the process tree, every
// per-connection sshd (each in a session of its own). With onlySSHD the sessions' own commands
// are left running, as a network cut would leave them.
func (s *SSHD) Kill(onlySSHD bool) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	root := s.cmd.Process.Pid
	for _, p := range append(Descendants(root), root) {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p))
		if onlySSHD && !strings.HasSuffix(exe, "/sshd") {
			continue
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
	s.cmd.Process.Wait()
}

// Descendants lists the process tree under pid (from /proc).
func Descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(string(b[i+1:]))
		if len(fs) < 2 {
			continue
		}
		p, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSuffix(f, "/stat"), "/proc/"))
		pp, _ := strconv.Atoi(fs[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
