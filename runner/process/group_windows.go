package process

import (
	"os"
	"syscall"
)

// Windows has no process groups to signal. Trials run on this machine only for the local host
// kind, which the matrix refuses on Windows (matrix/kinds_windows.go), and the wsl driver kills
// its trials inside the distribution; so these stand-ins only need to be safe, not thorough.

// groupAttr: nothing to set; the trial is an ordinary child.
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the trial's own process (its children may survive it).
func signalGroup(p *os.Process, _ bool) error { return p.Kill() }
