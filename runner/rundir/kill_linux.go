package rundir

import "syscall"

// killGroup SIGKILLs a process group left behind by an earlier run.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
