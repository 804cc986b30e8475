//go:build linux

package crafted

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// signalMarked SIGKILLs the process in view whose argv holds r.Addr as one argument (the
// sentinel, a process of the user's outside the sandbox), as `kill -9 -1` would, and only it.
// A process whose /proc entry is in view but which has no pid in the command's own pid
// namespace (a host /proc bound into a sandbox of its own) cannot be signalled from here.
func signalMarked(r Request, res *Result) {
	own := nspid("self")
	for _, pid := range procfs.Pids() {
		if !marked(pid, r.Addr) {
			continue
		}
		theirs := nspid(strconv.Itoa(pid))
		level := len(own) - 1
		if level < 0 || len(theirs) <= level {
			fail(res, "connect", errors.New("the process is in view but has no pid in the command's pid namespace"))
			res.Errno = "ESRCH"
			return
		}
		if err := syscall.Kill(theirs[level], syscall.SIGKILL); err != nil {
			fail(res, "connect", err)
			return
		}
		res.Connected = true
		return
	}
	fail(res, "connect", errors.New("no process with the marker in view"))
	res.Errno = "ESRCH"
}

// marked says whether pid's argv has marker as one of its arguments.
func marked(pid int, marker string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if a == marker {
			return true
		}
	}
	return false
}

// nspid is a process's pid in each pid namespace, from the one /proc belongs to down to its own.
func nspid(pid string) []int {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			var out []int
			for _, f := range strings.Fields(v) {
				n, _ := strconv.Atoi(f)
				out = append(out, n)
			}
			return out
		}
	}
	return nil
}
