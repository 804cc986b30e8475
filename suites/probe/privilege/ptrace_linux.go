package privilege

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// confinement is what /proc/PID/status says of a process's confinement.
type confinement struct {
	name    string
	seccomp int      // 0 none, 1 strict, 2 filter
	capEff  *big.Int // effective capabilities
	// nspid is the process's pid in each pid namespace from the one /proc belongs to down to
	// its own. /proc may be an outer namespace's (a sandbox that nests the command's), while
	// ptrace takes the pid as the caller's namespace numbers it.
	nspid []int
}

func readConfinement(pid string) (confinement, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return confinement{}, err
	}
	c := confinement{seccomp: -1, capEff: new(big.Int)}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			c.name = v
		case "Seccomp":
			c.seccomp, _ = strconv.Atoi(v)
		case "CapEff":
			c.capEff.SetString(v, 16)
		case "NSpid":
			c.nspid = procfs.ParseNSpid(v)
		}
	}
	return c, nil
}

// looser says whether other is less confined than c: no seccomp filter where c has one, or an
// effective capability c lacks.
func (c confinement) looser(other confinement) bool {
	if other.seccomp == 0 && c.seccomp > 0 {
		return true
	}
	extra := new(big.Int).AndNot(other.capEff, c.capEff)
	return extra.Sign() != 0
}

// Looser surveys every process in view that is less confined than the probe (a helper the
// sandbox left unfiltered, or one holding capabilities) and tries to take it over: ptrace
// (PTRACE_SEIZE, released at once) and opening its memory for writing (nothing is written).
// Either working is the breach: code run through such a process is not under the command's
// confinement. The report lists every such process with what each attempt got. In the control
// run (no sandbox) the probe tries its own child instead: whether ptrace works here at all.
func Looser(control bool) (string, error) {
	if control {
		return ptraceOwnChild()
	}
	self, err := readConfinement("self")
	if err != nil {
		return "", err
	}
	var seen, taken []string
	for _, n := range procfs.Pids() {
		pid := strconv.Itoa(n)
		other, err := readConfinement(pid)
		if err != nil || !self.looser(other) {
			continue
		}
		seize := "no pid in the command's pid namespace"
		if vpid, ok := procfs.PidIn(self.nspid, other.nspid); ok {
			seize = trySeize(vpid)
		}
		mem := tryMem(pid)
		line := fmt.Sprintf("%s %s (seccomp %d, CapEff %x): ptrace %s, mem %s", pid, other.name, other.seccomp, other.capEff, seize, mem)
		seen = append(seen, line)
		if seize == "ok" || mem == "ok" {
			taken = append(taken, line)
		}
	}
	data := fmt.Sprintf("the command (seccomp %d, CapEff %x) sees ", self.seccomp, self.capEff) + strings.Join(seen, "; ")
	if len(seen) == 0 {
		data += "no process less confined than itself"
	}
	if len(taken) == 0 {
		return data, fmt.Errorf("no less confined process taken over: %w", unix.EPERM)
	}
	return data, nil
}

// trySeize attaches to pid without stopping it and detaches at once.
func trySeize(pid int) string {
	// A tracee belongs to the thread that attached it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0); errno != 0 {
		return errno.Error()
	}
	// Detaching needs the tracee stopped: interrupt it, wait for the stop, let it go.
	if err := unix.PtraceInterrupt(pid); err == nil {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
	}
	_ = unix.PtraceDetach(pid)
	return "ok"
}

// tryMem opens pid's memory for writing (the kernel checks ptrace's rights) and closes it.
func tryMem(pid string) string {
	f, err := os.OpenFile("/proc/"+pid+"/mem", os.O_RDWR, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err.Error()
		}
		return err.Error()
	}
	f.Close()
	return "ok"
}

// ptraceOwnChild is the control: the probe starts a child and ptraces it.
func ptraceOwnChild() (string, error) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		return "", err
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if got := trySeize(child.Process.Pid); got != "ok" {
		return "ptrace of its own child: " + got, fmt.Errorf("ptrace of its own child: %s: %w", got, unix.EPERM)
	}
	return "ptrace of its own child: ok", nil
}
