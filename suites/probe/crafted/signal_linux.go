//go:build linux

package crafted

import (
	"errors"
	"slices"
	"strconv"
	"syscall"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// signalMarked SIGKILLs the process in view whose argv holds r.Addr as one argument (the
// sentinel, a process of the user's outside the sandbox), as `kill -9 -1` would, and only it.
// A process whose /proc entry is in view but which has no pid in the command's own pid
// namespace (a host /proc bound into a sandbox of its own) cannot be signalled from here.
func signalMarked(r Request, res *Result) {
	own := procfs.NSpid("self")
	for _, pid := range procfs.Pids() {
		if !slices.Contains(procfs.Argv(pid), r.Addr) {
			continue
		}
		theirs, ok := procfs.PidIn(own, procfs.NSpid(strconv.Itoa(pid)))
		if !ok {
			fail(res, "connect", errors.New("the process is in view but has no pid in the command's pid namespace"))
			res.Errno = "ESRCH"
			return
		}
		if err := syscall.Kill(theirs, syscall.SIGKILL); err != nil {
			fail(res, "connect", err)
			return
		}
		res.Connected = true
		return
	}
	fail(res, "connect", errors.New("no process with the marker in view"))
	res.Errno = "ESRCH"
}
