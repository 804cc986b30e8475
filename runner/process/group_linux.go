package process

import (
	"os"
	"syscall"
)

// groupAttr starts a trial as the leader of its own process group (Setpgid), so kill(-pgid)
// reaches everything it spawned and a terminal's Ctrl-C reaches only us. Pdeathsig: if the
// runner dies, the leader dies too.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends SIGTERM (kill: SIGKILL) to the process group p leads.
func signalGroup(p *os.Process, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-p.Pid, sig)
}
