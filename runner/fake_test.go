package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
)

// Fake is an in-process executor for the runner's own tests and benchmarks. Each trial's
// outcome is drawn from P with a generator seeded by (Seed, cell ID, trial index), so a rerun,
// a resume or another -j gives every trial the same outcome.
type Fake struct {
	Seed  uint64
	P     map[model.Outcome]float64 // probability of each outcome; the rest is correct
	Delay time.Duration             // how long a trial takes (honours ctx)
	// Scenarios, when set, are the verdicts every trial reports (known findings among them);
	// in a trial drawn another outcome than correct, the first one fails with it instead. The
	// record's outcome is then the worst failing scenario's.
	Scenarios []model.Scenario
	Evidence  json.RawMessage // every trial's evidence
	HostFP    json.RawMessage // the host fingerprint, on each cell's first trial
}

// Run implements Executor.
func (f *Fake) Run(ctx context.Context, t Trial) model.Record {
	start := time.Now()
	if f.Delay > 0 {
		timer := time.NewTimer(f.Delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return model.Record{Outcome: model.Timeout, Error: ctx.Err().Error(), Start: start}
		}
	}
	rec := model.Record{Outcome: f.Outcome(t.Cell.ID, t.Index), Start: start, Evidence: f.Evidence}
	if t.Index == 0 {
		rec.HostFP = f.HostFP
	}
	if len(f.Scenarios) > 0 {
		rec.Scenarios = append([]model.Scenario(nil), f.Scenarios...)
		if rec.Outcome != model.Correct {
			rec.Scenarios[0] = model.Scenario{Name: rec.Scenarios[0].Name, Outcome: rec.Outcome, Hint: "drawn by the fake"}
		}
		var failing []model.Outcome
		for _, s := range rec.Scenarios {
			if !s.Pass {
				failing = append(failing, s.Outcome)
			}
		}
		rec.Outcome = model.Worst(append(failing, model.Correct)...)
	}
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec
}

// Outcome is the outcome Fake gives trial index of cell.
func (f *Fake) Outcome(cell string, index int) model.Outcome {
	return runtest.Draw(f.Seed, f.P, cell, index)
}
