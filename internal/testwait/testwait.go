//go:build linux

// Package testwait is how sandcheck's tests wait: for a condition they can only look at (a file
// holding enough pids, an interface gone, an account's processes reaped), by polling it until it
// holds or a deadline passes; for a process's end, on the kernel's word (a pidfd becomes readable
// when the process exits). A test never sleeps a fixed time hoping something happened meanwhile.
package testwait

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pollEvery is how often a condition is looked at.
const pollEvery = 10 * time.Millisecond

// Eventually reports whether cond holds within the time given, looking every few milliseconds.
func Eventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// Until fails the test unless cond holds within the time given; what names the condition.
func Until(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if !Eventually(within, cond) {
		t.Fatalf("timed out after %s waiting for %s", within, what)
	}
}

// Exited waits for process pid to end (exit; a zombie counts as ended) and reports whether it
// did within the time given. The kernel says so: a pidfd of the process becomes readable.
func Exited(pid int, within time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errors.Is(err, unix.ESRCH) // no such process: ended (and reaped) already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(within); ; {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// Gone fails the test unless every pid ends within the time given.
func Gone(t testing.TB, within time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range pids {
		if !Exited(p, time.Until(deadline)) {
			t.Fatalf("process %d still running %s later", p, within)
		}
	}
}

// Pids waits until file lists at least n pids (whitespace-separated) and returns them.
func Pids(t testing.TB, file string, n int, within time.Duration) []int {
	t.Helper()
	var pids []int
	read := func() bool {
		b, _ := os.ReadFile(file)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return len(pids) >= n
	}
	Until(t, fmt.Sprintf("%d pids in %s", n, file), within, read)
	return pids
}

// Running reports whether pid is a live (not zombie) process now.
func Running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}
