//go:build linux

package harness

// Phases: where a trial process's time goes, so a slow trial (or a slow runner) can be taken
// apart without a profiler: the fixture's set-up, the sandboxed run, the cleanup after it and the
// classification, summed over every session of the trial. The trial command adds its own
// (process start, Ginkgo, report) and emits them all with the result.

import (
	"sync"
	"time"
)

// Phase names a trial's time is split into.
const (
	PhaseStart    = "start"    // process start to the first spec (Go runtime, flags, Ginkgo set-up)
	PhaseFixture  = "fixture"  // trial directory, fixture namespace, veth, servers, readiness
	PhaseSandbox  = "sandbox"  // the sandboxed runs: the sandbox's start, the probe, its exit
	PhaseCleanup  = "cleanup"  // killing what the runs left, tearing the fixture down
	PhaseClassify = "classify" // reading the evidence into outcomes
	PhaseSpecs    = "specs"    // the rest of the specs' time: Ginkgo, judgements, known findings
	PhaseReport   = "report"   // Ginkgo's JSON report read back, fingerprint, result line
)

var phases struct {
	mu sync.Mutex
	d  map[string]time.Duration
}

// timePhase starts timing name; the returned func ends it and adds the time to the phase.
func timePhase(name string) func() {
	start := time.Now()
	return func() { AddPhase(name, time.Since(start)) }
}

// AddPhase adds d to the phase name.
func AddPhase(name string, d time.Duration) {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	if phases.d == nil {
		phases.d = map[string]time.Duration{}
	}
	phases.d[name] += d
}

// Phases returns the time spent so far per phase.
func Phases() map[string]time.Duration {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	out := make(map[string]time.Duration, len(phases.d))
	for k, v := range phases.d {
		out[k] = v
	}
	return out
}

// ProcessStart is when this process started, near enough (package initialisation), or when
// RestartClock last said its trial started.
func ProcessStart() time.Time { return processStart }

// RestartClock makes the trial's clocks (its budget, its start phase) count from now: for a
// process started ahead of its trial, which waited for it. Call it before FromEnv.
func RestartClock() { processStart = time.Now() }
