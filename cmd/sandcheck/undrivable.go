//go:build linux

package main

import (
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets"
)

// undrivableTrial is the result of a trial whose target build the adapter cannot drive (its
// command line or settings are ones the adapter does not speak): not-applicable with the
// adapter's reason, never a failure of the sandbox. ok is false for a drivable build.
func undrivableTrial(cfg harness.Config) (specreport.Trial, bool) {
	t, err := harness.NewTarget(cfg)
	if err != nil {
		return specreport.Trial{}, false // the specs report it, as before
	}
	why := targets.UndrivableReason(t)
	if why == "" {
		return specreport.Trial{}, false
	}
	hint := fmt.Sprintf("%s %s: %s", t.Name(), t.Version(), why)
	return specreport.Trial{Outcome: model.NotApplicable, Hint: hint,
		Scenarios: []model.Scenario{{Name: targets.ScenarioDrivable, Outcome: model.NotApplicable, Pass: true, Hint: hint}}}, true
}
