// Package procfs reads what sandcheck needs of /proc: a process's start time (which tells it
// from a later process that reuses its pid), the boot id (which tells this boot from an earlier
// one), and which processes carry a marker in their environment, so that whatever a trial
// started can be found however it left its process group. Standard library only.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StartTicks is a process's start time in clock ticks since boot (field 22 of /proc/PID/stat).
func StartTicks(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: split after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64) // the fields after ')' start at field 3
}

// BootID names the running boot of this machine ("unknown" where it cannot be read).
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// Pids lists the processes of this pid namespace, except this one.
func Pids() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	out := make([]int, 0, len(dirs))
	for _, d := range dirs {
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != self {
			out = append(out, pid)
		}
	}
	return out
}

// HasEnv says whether the environment of process pid holds kv ("NAME=VALUE") exactly.
func HasEnv(pid int, kv string) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	return bytes.Contains(append([]byte{0}, append(env, 0)...), []byte("\x00"+kv+"\x00"))
}

// UnescapeMount undoes the octal escapes of a path in /proc/mounts or mountinfo (\040 for a
// space, \134 for a backslash).
func UnescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if o := s[i+1 : i+4]; o[0] >= '0' && o[0] <= '3' && o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7' {
				b.WriteByte((o[0]-'0')<<6 | (o[1]-'0')<<3 | (o[2] - '0'))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
