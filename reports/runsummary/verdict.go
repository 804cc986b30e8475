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
	Harness             // harness errors or timeouts above the bound
)

// Verdict is what a run amounts to, and why.
type Verdict struct {
	Kind    Kind
	Reasons []string
}

// Judge reads the run's cells from the report: a fail-open or a failure outside the known
// findings is a Fail; else harness errors and timeouts in more than maxHarness of a cell's
// trials are Harness; else Pass.
func Judge(rep *schema.Report, cells []model.Cell, maxHarness float64) Verdict {
	var fail, harness []string
	for _, c := range view(rep, cells) {
		id, v, trials := c.cell.ID, c.v, c.overall.Trials
		if v.FailOpen > 0 {
			fail = append(fail, fmt.Sprintf("%s: fail-open in %d of %d trials (non-enforcing outside the known findings, or egress)", id, v.FailOpen, trials))
		}
		var names []string
		for _, name := range c.names() {
			if c.scen[name].Verdicts.Unknown > 0 {
				names = append(names, name)
			}
		}
		switch {
		case len(names) > 0:
			fail = append(fail, fmt.Sprintf("%s: failed outside the known findings: %s", id, strings.Join(names, ", ")))
		case v.Unknown > 0 && v.FailOpen == 0:
			fail = append(fail, fmt.Sprintf("%s: %d trial(s) failed without a scenario verdict", id, v.Unexplained))
		}
		if trials > 0 && float64(v.Harness) > maxHarness*float64(trials) {
			harness = append(harness, fmt.Sprintf("%s: harness errors or timeouts in %d of %d trials (%.0f%%), above --max-harness-rate %g", id, v.Harness, trials, 100*stats.Rate(v.Harness, trials), maxHarness))
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
