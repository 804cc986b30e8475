// Package shortlived tunes the Go runtime of a process that lives for one trial, a trial
// process: it allocates a few MB in all (9 MB for the network scenario, 21 MB for the bypass
// ones), and the five to ten collections the default GOGC makes in that time cost ~15 ms of a
// network trial's ~45 ms of our own work on this 2-core machine. So it does not collect garbage
// until its heap nears a limit, and then it does, as any process would.
package shortlived

import (
	"os"
	"runtime/debug"
)

// NoGCBelow turns garbage collection off until the heap nears limit bytes, unless GOGC or
// GOMEMLIMIT in the environment says how this process is to collect.
func NoGCBelow(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(-1)
}
