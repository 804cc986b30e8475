package runner

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"time"

	"github.com/sandcheck/sandcheck/runner/journal"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// Fake is an in-process executor for tests and benchmarks of the runner itself. Each trial's
// outcome is drawn from P with a generator seeded by (Seed, cell ID, trial index), so a rerun,
// a resume or another -j gives every trial the same outcome.
type Fake struct {
	Seed  uint64
	P     map[classify.Outcome]float64 // probability of each outcome; the rest is correct
	Delay time.Duration                // how long a trial takes (honours ctx)
	// Scenarios, when set, are the verdicts every trial reports (known findings among them);
	// in a trial drawn another outcome than correct, the first one fails with it instead. The
	// record's outcome is then the worst failing scenario's.
	Scenarios []journal.Scenario
	Evidence  json.RawMessage // every trial's evidence
	HostFP    json.RawMessage // the host fingerprint, on each cell's first trial
}

// Run implements Executor.
func (f *Fake) Run(ctx context.Context, t Trial) journal.Record {
	start := time.Now()
	if f.Delay > 0 {
		timer := time.NewTimer(f.Delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return journal.Record{Outcome: classify.Timeout, Error: ctx.Err().Error(), Start: start}
		}
	}
	rec := journal.Record{Outcome: f.Outcome(t.Cell.ID, t.Index), Start: start, Evidence: f.Evidence}
	if t.Index == 0 {
		rec.HostFP = f.HostFP
	}
	if len(f.Scenarios) > 0 {
		rec.Scenarios = append([]journal.Scenario(nil), f.Scenarios...)
		if rec.Outcome != classify.Correct {
			rec.Scenarios[0] = journal.Scenario{Name: rec.Scenarios[0].Name, Outcome: rec.Outcome, Hint: "drawn by the fake"}
		}
		var failing []classify.Outcome
		for _, s := range rec.Scenarios {
			if !s.Pass {
				failing = append(failing, s.Outcome)
			}
		}
		rec.Outcome = classify.Worst(append(failing, classify.Correct)...)
	}
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec
}

// Outcome is the outcome Fake gives trial index of cell.
func (f *Fake) Outcome(cell string, index int) classify.Outcome {
	u := FakeUniform(f.Seed, cell, index)
	acc := 0.0
	for _, o := range classify.All {
		if o == classify.Correct {
			continue
		}
		acc += f.P[o]
		if u < acc {
			return o
		}
	}
	return classify.Correct
}

// FakeUniform is a deterministic uniform number in [0, 1) for (seed, cell, index).
func FakeUniform(seed uint64, cell string, index int) float64 {
	h := fnv.New64a()
	h.Write([]byte(cell))
	x := h.Sum64() ^ seed ^ uint64(index)*0x9e3779b97f4a7c15
	// splitmix64 finalizer: fnv alone correlates neighbouring indexes.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / math.Exp2(53)
}
