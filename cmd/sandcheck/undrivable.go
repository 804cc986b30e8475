//go:build linux

package main

import (
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// undrivableTrial is the result of a trial whose target build the adapter cannot drive (its
// command line or settings are ones the adapter does not speak): not-applicable with the
// adapter's reason, never a failure of the sandbox. ok is false for a drivable build.
func undrivableTrial(cfg harness.Config) (frame.Trial, bool) {
	t, err := harness.NewTarget(cfg)
	if err != nil {
		return frame.Trial{}, false // the specs report it, as before
	}
	why := targets.UndrivableReason(t)
	if why == "" {
		return frame.Trial{}, false
	}
	hint := fmt.Sprintf("%s %s: %s", t.Name(), t.Version(), why)
	return frame.Trial{Outcome: model.NotApplicable, Hint: hint,
		Scenarios: []model.Scenario{{Name: model.ScenarioDrivable, Outcome: model.NotApplicable, Pass: true, Hint: hint}}}, true
}
