//go:build linux

// Package phases accounts where a trial process's time goes, so a slow trial (or a slow runner)
// can be taken apart without a profiler: the fixture's set-up, the sandboxed run, the cleanup
// after it and the classification, summed over every session of the trial. The trial command
// adds its own (process start, Ginkgo, report) and emits them all with the result. It also holds
// the process's clock, from which a trial's budget counts.
package phases

import (
	"sync"
	"time"
)

// Phase names a trial's time is split into.
const (
	Start    = "start"    // process start to the first spec (Go runtime, flags, Ginkgo set-up)
	Fixture  = "fixture"  // trial directory, fixture namespace, veth, servers, readiness
	Sandbox  = "sandbox"  // the sandboxed runs: the sandbox's start, the probe, its exit
	Cleanup  = "cleanup"  // killing what the runs left, tearing the fixture down
	Classify = "classify" // reading the evidence into outcomes
	Specs    = "specs"    // the rest of the specs' time: Ginkgo, judgements, known findings
	Report   = "report"   // Ginkgo's JSON report read back, fingerprint, result line
)

var phases struct {
	mu       sync.Mutex
	d        map[string]time.Duration
	sessions int           // sandbox starts: what a trial cannot do with fewer (issue 32's floor)
	inSess   time.Duration // their time, start to exit
}

// Time starts timing name; the returned func ends it and adds the time to the phase.
func Time(name string) func() {
	start := time.Now()
	return func() { Add(name, time.Since(start)) }
}

// Add adds d to the phase name.
func Add(name string, d time.Duration) {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	if phases.d == nil {
		phases.d = map[string]time.Duration{}
	}
	phases.d[name] += d
}

// Session counts one sandboxed run (a start of the sandbox under test) that took d.
func Session(d time.Duration) {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	phases.sessions++
	phases.inSess += d
}

// Sessions is how many sandboxed runs this process started so far, and their time together.
func Sessions() (n int, d time.Duration) {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	return phases.sessions, phases.inSess
}

// All returns the time spent so far per phase.
func All() map[string]time.Duration {
	phases.mu.Lock()
	defer phases.mu.Unlock()
	out := make(map[string]time.Duration, len(phases.d))
	for k, v := range phases.d {
		out[k] = v
	}
	return out
}

// processStart is when this process started, near enough: the budget a runner gives a trial
// process counts from its start, however many trials it then runs.
var processStart = time.Now()

// ProcessStart is when this process started, near enough (package initialisation), or when
// RestartClock last said its trial started.
func ProcessStart() time.Time { return processStart }

// RestartClock makes the trial's clocks (its budget, its start phase) count from now: for a
// process started ahead of its trial, which waited for it. Call it before harness.FromEnv.
func RestartClock() { processStart = time.Now() }

// Milliseconds is every phase of this process in ms, with the trial command's own: the specs'
// time (specs, less what the harness accounted for) and the report's.
func Milliseconds(specs, report time.Duration) map[string]int64 {
	p := All()
	for name, d := range p {
		if name != Start {
			specs -= d
		}
	}
	p[Specs] = max(specs, 0)
	p[Report] = report
	out := make(map[string]int64, len(p))
	for name, d := range p {
		out[name] = d.Milliseconds()
	}
	return out
}
