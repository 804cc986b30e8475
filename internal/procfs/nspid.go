package procfs

import (
	"os"
	"strconv"
	"strings"
)

// Argv is a process's command line, one element per argument; nil where it cannot be read.
func Argv(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// NSpid is a process's pid ("self", or a number) in each pid namespace, from the one /proc
// belongs to down to its own (the NSpid line of /proc/PID/status); nil where it cannot be read.
// /proc may be an outer namespace's (a sandbox that binds the host's into a namespace of its own).
func NSpid(pid string) []int {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return ParseNSpid(v)
		}
	}
	return nil
}

// ParseNSpid reads the value of a status file's NSpid line.
func ParseNSpid(v string) []int {
	var out []int
	for _, f := range strings.Fields(v) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// PidIn is other's pid in self's own pid namespace, both as NSpid reads them: self is the
// deepest, so other has a pid there only when it lives in that namespace or one below it, and
// can be signalled or traced from there only then.
func PidIn(self, other []int) (int, bool) {
	level := len(self) - 1
	if level < 0 || len(other) <= level {
		return 0, false
	}
	return other[level], true
}
