package runsummary

import (
	"encoding/json"
	"io"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// Summary is the stable shape of `run --json`.
type Summary struct {
	Trials      int                   `json:"trials"`
	Outcomes    map[model.Outcome]int `json:"outcomes"`
	Cells       []Cell                `json:"cells"`
	Journal     string                `json:"journal"`
	ExitCode    int                   `json:"exit_code"`
	ExitReasons []string              `json:"exit_reasons,omitempty"`
}

// Cell is one cell of Summary.
type Cell struct {
	ID       string                `json:"id"`
	Target   string                `json:"target"`
	Version  string                `json:"version,omitempty"` // a chosen version; "" = the pinned install
	Host     string                `json:"host"`
	User     string                `json:"user"` // who the sandbox ran as
	Fault    string                `json:"fault"`
	Trials   int                   `json:"trials"`
	Outcomes map[model.Outcome]int `json:"outcomes"`
	// FailureRate counts every trial whose outcome is not correct, harness trouble aside.
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	// Known counts failing scenario verdicts covered by a known finding; UnknownFailures those
	// not covered, plus trials that failed with no scenario verdict (no result, or egress).
	Known           int `json:"known"`
	UnknownFailures int `json:"unknown_failures"`
	FailOpen        int `json:"fail_open"` // trials with a fail-open outside the known findings
	Egress          int `json:"egress"`    // trials whose fixture servers saw traffic not allowed
	Harness         int `json:"harness"`   // trials with a harness error or timeout
}

// JSON writes the run's summary as one JSON object: per cell and in all, the trials' outcome
// counts, the cell's failure rate with its Wilson interval, the verdict tallies; the journal and
// the exit code with its reasons.
func JSON(w io.Writer, rep *schema.Report, cells []model.Cell, journal string, e Ending) error {
	js := Summary{Outcomes: map[model.Outcome]int{}, Cells: []Cell{}, Journal: journal, ExitCode: e.Code, ExitReasons: e.Reasons}
	for _, c := range view(rep, cells) {
		jc := Cell{ID: c.cell.ID, Target: c.cell.Target, Version: c.cell.Version, Host: c.cell.Host, User: model.RecordedUser(c.cell.User),
			Fault: c.cell.Fault, Trials: c.overall.Trials, Outcomes: map[model.Outcome]int{}}
		fails, counted := 0, 0
		for o, k := range c.overall.Outcomes {
			if k == 0 {
				continue
			}
			jc.Outcomes[model.Outcome(o)] += k
			js.Outcomes[model.Outcome(o)] += k
			switch model.Outcome(o).Severity() {
			case model.SevHarness, model.SevSkip:
				continue
			}
			counted += k
			if model.Outcome(o) != model.Correct {
				fails += k
			}
		}
		js.Trials += c.overall.Trials
		ci := stats.Wilson(fails, counted)
		jc.FailureRate, jc.CI95 = stats.Rate(fails, counted), [2]float64{ci.Low, ci.High}
		for _, r := range c.scen {
			jc.Known += r.KnownFailures()
			jc.UnknownFailures += r.FailingTrials(run)
		}
		if jc.UnknownFailures == 0 {
			jc.UnknownFailures = c.overall.FailingTrials(run) // failures no scenario verdict shows
		}
		jc.FailOpen, jc.Egress, jc.Harness = c.overall.FailOpenTrials(run), c.overall.Egress, c.overall.Harness
		js.Cells = append(js.Cells, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(js)
}
