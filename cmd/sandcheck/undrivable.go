//go:build linux

package main

import (
	"fmt"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// undrivableTrial is the result of a trial whose target build the adapter cannot drive (its
// command line or settings are ones the adapter does not speak), or whose cell's fault cannot
// act on the target (it offers none of the seams the fault acts through): not-applicable with
// the reason, never a failure of the sandbox, and never a healthy run passed off as the
// fault's. ok is false for a trial that can run.
func undrivableTrial(cfg harness.Config) (frame.Trial, bool) {
	t, err := harness.NewTarget(cfg)
	if err != nil {
		return frame.Trial{}, false // the specs report it, as before
	}
	why := targets.UndrivableReason(t)
	if f, _, err := faults.Parse(cfg.Fault); why == "" && err == nil && f != nil {
		if ok, seams := f.AppliesTo(t); !ok {
			why = fmt.Sprintf("fault %s cannot act here: %s", f.Name, seams)
		}
	}
	if why == "" {
		return frame.Trial{}, false
	}
	hint := fmt.Sprintf("%s %s: %s", t.Name(), t.Version(), why)
	return frame.Trial{Outcome: model.NotApplicable, Hint: hint,
		Scenarios: []model.Scenario{{Name: model.ScenarioDrivable, Outcome: model.NotApplicable, Pass: true, Hint: hint}}}, true
}
