// Package limits measures, from inside a sandbox, how far the command gets at starting
// processes, taking memory and filling a writable path: what the sandbox limits. Each
// measurement stops at a cap of its own, and the trial runs the sandbox in a cgroup (and the
// path on a tmpfs) it owns, so neither a sandbox without limits nor this code puts the host at
// risk. The outcome is information, not a verdict: the host side says which bound stopped it.
package limits

// Spec asks for the three measurements; a zero cap skips one.
type Spec struct {
	Processes int    `json:"processes,omitempty"`  // children to start at most
	MemoryMiB int    `json:"memory_mib,omitempty"` // MiB a child takes at most
	DiskMiB   int    `json:"disk_mib,omitempty"`   // MiB written at most
	DiskPath  string `json:"disk_path,omitempty"`  // file written, removed afterwards
}

// Result is how far each measurement got and what stopped it: Cap when nothing did, else the
// error (errno name) or the signal that ended it.
type Result struct {
	Processes  int    `json:"processes"`
	ProcessEnd string `json:"process_end"`
	MemoryMiB  int    `json:"memory_mib"`
	MemoryEnd  string `json:"memory_end"`
	DiskMiB    int    `json:"disk_mib"`
	DiskEnd    string `json:"disk_end"`
}

// Cap is the end of a measurement that reached its cap.
const Cap = "cap"

// AllocArg starts the probe as the child that takes memory (a process of its own, so the
// kernel's OOM killer or a limit ends it and not the probe).
const AllocArg = "__sandcheck_alloc"

// ChunkMiB is the step of the memory and disk measurements.
const ChunkMiB = 8
