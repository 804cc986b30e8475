package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// removeDeadMuxSockets removes the per-process sockets srt leaves in its TMPDIR when it is killed
// (srt-mux-PID-N.sock; it removes them itself on a normal exit): made since start by a process
// that no longer runs. Left behind, one is more than litter: an srt that later gets the
// same process id (pid_max is 32768 here) fails to start on it (EADDRINUSE), which reads as
// sandbox-failed. A concurrent trial's live srt keeps its socket: its process still runs.
func removeDeadMuxSockets(env []string, start time.Time) {
	dir := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			dir = v
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "srt-mux-*.sock"))
	for _, name := range names {
		pid, ok := muxSocketPID(filepath.Base(name))
		if !ok || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // malformed, or its process (or one with its id) still runs
		}
		fi, err := os.Lstat(name)
		if err != nil || fi.Mode().Type() != os.ModeSocket || fi.ModTime().Before(start) {
			continue
		}
		os.Remove(name)
	}
}

// muxSocketPID reads PID out of srt-mux-PID-N.sock.
func muxSocketPID(base string) (int, bool) {
	rest, ok := strings.CutPrefix(base, "srt-mux-")
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}
