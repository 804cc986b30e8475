package runsummary

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// Kind is what a run amounts to; `sandcheck run` gives each its exit code.
type Kind int

const (
	Pass    Kind = iota // every scenario passed; failures covered by known findings allowed
	Fail                // a fail-open, or a scenario failure outside the known findings
	Harness             // harness errors or timeouts above the bound, or a cell that measured nothing
)

// Verdict is what a run amounts to, and why.
type Verdict struct {
	Kind    Kind
	Reasons []string
}

// Judge reads the run's cells from the report, accepting every known finding (the rule is
// model's; `run --help` says which findings it accepts): a fail-open or a failure no known
// finding covers is a Fail; else harness errors and timeouts in more than maxHarness of a cell's
// trials are Harness; else Pass. A cell with no trial is a Fail: it measured nothing.
func Judge(rep *schema.Report, cells []model.Cell, maxHarness float64) Verdict {
	var fail, harness []string
	for _, c := range view(rep, cells) {
		id, o, trials := c.cell.ID, c.overall, c.overall.Trials
		if trials == 0 {
			fail = append(fail, fmt.Sprintf("%s: no trial finished: nothing was measured", id))
			continue
		}
		if n := o.FailOpenTrials(run); n > 0 {
			fail = append(fail, fmt.Sprintf("%s: fail-open in %d of %d trials (non-enforcing outside the known findings, or egress no known finding accounts for)", id, n, trials))
		}
		var names []string
		for _, name := range c.names() {
			if c.scen[name].FailingTrials(run) > 0 {
				names = append(names, name)
			}
		}
		switch {
		case len(names) > 0:
			fail = append(fail, fmt.Sprintf("%s: failed outside the known findings: %s", id, strings.Join(names, ", ")))
		case o.FailingTrials(run) > 0 && o.FailOpenTrials(run) == 0:
			fail = append(fail, fmt.Sprintf("%s: %d trial(s) failed without a scenario verdict", id, o.FailingTrials(run)))
		}
		if o.NotApplicable == trials {
			harness = append(harness, fmt.Sprintf("%s: not applicable in every trial (%s): it measured nothing", id, hint(o.Counts, model.NotApplicable)))
		}
		if float64(o.Harness) > maxHarness*float64(trials) {
			harness = append(harness, fmt.Sprintf("%s: harness errors or timeouts in %d of %d trials (%.0f%%), above --max-harness-rate %g", id, o.Harness, trials, 100*stats.Rate(o.Harness, trials), maxHarness))
		}
	}
	switch {
	case len(fail) > 0:
		return Verdict{Fail, fail}
	case len(harness) > 0:
		return Verdict{Harness, harness}
	}
	return Verdict{Pass, nil}
}
