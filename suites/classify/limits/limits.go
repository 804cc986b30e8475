// Package limits reads a limits trial: per measurement, what stopped the command (the
// sandbox's own limit, or the bound the trial set around it: its control group's ceilings, the
// tmpfs under the path filled, the probe's cap). Information, never a failure of the sandbox;
// but a measurement without its evidence is harness trouble, never information.
package limits

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	probelimits "github.com/sandcheck/sandcheck/suites/probe/limits"
)

// The measurements, each a scenario of the class.
const (
	Processes = "processes"
	Memory    = "memory"
	Disk      = "disk"
)

// Bounds are what the trial set around the sandbox, and the probe's caps.
type Bounds struct {
	Tasks     int // the control group's task ceiling
	MemoryMiB int // its memory ceiling
	TmpfsMiB  int // the size of the tmpfs the disk measurement fills
	probelimits.Spec
}

// Counters are the control group's, read on the host after the run (package cgroup's Stats).
type Counters struct {
	TasksRefused, OOMKills int
	Err                    error // the counters could not be read
}

// Input is what a limits trial saw.
type Input struct {
	classify.Session
	Bounds   Bounds
	Counters Counters
}

// Measure is one measurement's reading.
type Measure struct {
	Outcome model.Outcome `json:"outcome"`
	// Limited: the sandbox stopped the command before the trial's bound did.
	Limited bool   `json:"limited"`
	Hint    string `json:"hint"`
}

// Classify reads each measurement. The host's counters decide which bound stopped it: a
// refusal the control group did not count was the sandbox's.
func Classify(in Input) map[string]Measure {
	out := map[string]Measure{}
	if o, hint, stop := in.Preconditions(); stop {
		for _, m := range []string{Processes, Memory, Disk} {
			out[m] = Measure{Outcome: o, Hint: hint}
		}
		return out
	}
	r := in.Obs.Limits
	if r == nil {
		for _, m := range []string{Processes, Memory, Disk} {
			out[m] = Measure{Outcome: model.HarnessError, Hint: "the probe reported no limits measurement"}
		}
		return out
	}
	if in.Counters.Err != nil {
		for _, m := range []string{Processes, Memory} {
			out[m] = Measure{Outcome: model.HarnessError, Hint: "the trial's control group: " + in.Counters.Err.Error()}
		}
	} else {
		out[Processes] = processes(*r, in.Bounds, in.Counters)
		out[Memory] = memory(*r, in.Bounds, in.Counters)
	}
	out[Disk] = disk(*r, in.Bounds)
	return out
}

func info(limited bool, format string, a ...any) Measure {
	return Measure{Outcome: model.Correct, Limited: limited, Hint: fmt.Sprintf(format, a...)}
}

func processes(r probelimits.Result, b Bounds, c Counters) Measure {
	switch {
	case r.ProcessEnd == "":
		return Measure{Outcome: model.HarnessError, Hint: "the probe did not measure processes"}
	case r.ProcessEnd == probelimits.Cap:
		return info(false, "not limited: %d processes started (the probe's cap)", r.Processes)
	case c.TasksRefused > 0:
		return info(false, "not limited: %d processes started, then the trial's control group (%d tasks) refused a fork", r.Processes, b.Tasks)
	case r.ProcessEnd == "EAGAIN":
		return info(true, "limited by the sandbox: %d processes started, then fork refused (EAGAIN) below the trial's %d tasks", r.Processes, b.Tasks)
	}
	return Measure{Outcome: model.HarnessError, Hint: fmt.Sprintf("processes: %d started, then %s", r.Processes, r.ProcessEnd)}
}

func memory(r probelimits.Result, b Bounds, c Counters) Measure {
	switch {
	case r.MemoryEnd == "":
		return Measure{Outcome: model.HarnessError, Hint: "the probe did not measure memory"}
	case r.MemoryEnd == probelimits.Cap:
		return info(false, "not limited: %d MiB taken (the probe's cap)", r.MemoryMiB)
	case c.OOMKills > 0:
		return info(false, "not limited: %d MiB taken, then the trial's control group (%d MiB) killed a process", r.MemoryMiB, b.MemoryMiB)
	case strings.HasPrefix(r.MemoryEnd, "mmap: ") || strings.HasPrefix(r.MemoryEnd, "killed by "):
		return info(true, "limited by the sandbox: %d MiB taken, then %s, below the trial's %d MiB", r.MemoryMiB, r.MemoryEnd, b.MemoryMiB)
	}
	return Measure{Outcome: model.HarnessError, Hint: fmt.Sprintf("memory: %d MiB taken, then %s", r.MemoryMiB, r.MemoryEnd)}
}

// disk: the tmpfs filled is the trial's bound; a file size or quota error, or no room well short
// of the tmpfs's size (a smaller filesystem of the sandbox's own there), is the sandbox's.
func disk(r probelimits.Result, b Bounds) Measure {
	switch {
	case r.DiskEnd == "":
		return Measure{Outcome: model.HarnessError, Hint: "the probe did not measure the disk"}
	case r.DiskEnd == probelimits.Cap:
		return info(false, "not limited: %d MiB written (the probe's cap)", r.DiskMiB)
	case r.DiskEnd == "ENOSPC" && r.DiskMiB >= b.TmpfsMiB-probelimits.ChunkMiB:
		return info(false, "not limited: %d MiB written, then the trial's %d MiB tmpfs was full", r.DiskMiB, b.TmpfsMiB)
	case r.DiskEnd == "ENOSPC" || r.DiskEnd == "EFBIG" || r.DiskEnd == "EDQUOT":
		return info(true, "limited by the sandbox: %d MiB written, then %s, below the trial's %d MiB tmpfs", r.DiskMiB, r.DiskEnd, b.TmpfsMiB)
	}
	return Measure{Outcome: model.HarnessError, Hint: fmt.Sprintf("disk: %d MiB written, then %s", r.DiskMiB, r.DiskEnd)}
}
