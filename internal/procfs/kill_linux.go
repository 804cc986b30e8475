package procfs

import (
	"syscall"
	"time"
)

// KillRounds SIGKILLs every process (but init and this one) that match selects, in up to rounds
// rounds until a round finds none (a dying parent may fork once more), calling between after each
// round that killed something, and returns how many it signalled.
func KillRounds(rounds int, match func(pid int) bool, between func()) int {
	n := 0
	for round := 0; round < rounds; round++ {
		found := 0
		for _, pid := range Pids() {
			if pid != 1 && match(pid) && syscall.Kill(pid, syscall.SIGKILL) == nil {
				found++
			}
		}
		n += found
		if found == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond) // let the killed exit before looking again
		if between != nil {
			between()
		}
	}
	return n
}

// KillEnv SIGKILLs every process whose environment holds kv ("NAME=VALUE"), as KillRounds does.
func KillEnv(kv string, rounds int, between func()) int {
	return KillRounds(rounds, func(pid int) bool { return HasEnv(pid, kv) }, between)
}
