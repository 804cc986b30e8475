// Package compare sets a new report against a baseline: which cell x scenario rows got
// significantly worse (one-sided Fisher's exact test on failures over measured trials), which
// outcome kinds appeared that the baseline never saw, and which rows appeared or disappeared.
// `sandcheck compare base.json new.json` prints WriteText and exits 1 when Result.Failed().
package compare

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// DefaultAlpha is the significance level when the caller gives none.
const DefaultAlpha = 0.05

// Regression is a row whose failure rate rose significantly.
type Regression struct {
	Name                       string
	CellID, Scenario           string
	BaseFailures, BaseMeasured int
	NewFailures, NewMeasured   int
	P                          float64 // one-sided Fisher p-value
}

// NewOutcome is an outcome kind a row shows now and never showed in the baseline.
type NewOutcome struct {
	Name     string
	Outcome  string
	Count    int
	Severity string
	What     string // for a fail-open outcome, what was breached, in its own terms
}

// Result is the comparison. Rows are named as in the reports (target@host fault scenario).
type Result struct {
	Alpha       float64
	Compared    int // rows present in both
	Regressions []Regression
	NewOutcomes []NewOutcome
	Disappeared []string // rows in the baseline only: a scenario that silently stopped running
	Added       []string // rows in the new report only
}

// Failed is the exit-1 condition: a significant rise, or a fail-open outcome the baseline never
// had. The latter needs no significance: one escaped request is a finding, not noise.
func (r Result) Failed() bool {
	if len(r.Regressions) > 0 {
		return true
	}
	for _, n := range r.NewOutcomes {
		if n.Severity == string(classify.SevFailOpen) {
			return true
		}
	}
	return false
}

// Compare matches rows by cell ID and scenario. alpha <= 0 means DefaultAlpha.
func Compare(base, cur *schema.Report, alpha float64) (Result, error) {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if alpha >= 1 {
		return Result{}, fmt.Errorf("compare: alpha %v must be below 1", alpha)
	}
	res := Result{Alpha: alpha}
	baseRows := map[string]schema.Cell{}
	for _, c := range base.Cells {
		baseRows[c.Key()] = c
	}
	seen := map[string]bool{}
	for _, n := range cur.Cells {
		seen[n.Key()] = true
		b, ok := baseRows[n.Key()]
		if !ok {
			res.Added = append(res.Added, n.Name())
			continue
		}
		res.Compared++
		p, err := stats.FisherRose(b.Failures, b.Measured, n.Failures, n.Measured)
		if err != nil {
			return Result{}, fmt.Errorf("compare %s: %w", n.Name(), err)
		}
		if p < alpha {
			res.Regressions = append(res.Regressions, Regression{Name: n.Name(), CellID: n.CellID, Scenario: n.Scenario,
				BaseFailures: b.Failures, BaseMeasured: b.Measured, NewFailures: n.Failures, NewMeasured: n.Measured, P: p})
		}
		for o, cnt := range n.Outcomes {
			if cnt > 0 && b.Outcomes[o] == 0 && o != string(classify.Correct) {
				sev := "unknown"
				if oc := classify.Outcome(o); oc.Valid() {
					sev = string(oc.Severity())
				}
				no := NewOutcome{Name: n.Name(), Outcome: o, Count: cnt, Severity: sev}
				if sev == string(classify.SevFailOpen) {
					no.What = n.Breached()
				}
				res.NewOutcomes = append(res.NewOutcomes, no)
			}
		}
	}
	// Egress no scenario row shows (a trial that timed out or crashed after reaching a denied
	// host) lives in the cells' overall rows: new there is a new fail-open too.
	baseOverall := map[string]schema.Overall{}
	for _, o := range base.Overall {
		baseOverall[o.CellID] = o
	}
	for _, o := range cur.Overall {
		b, ok := baseOverall[o.CellID]
		if ok && o.TrialFailOpen > 0 && b.TrialFailOpen == 0 {
			res.NewOutcomes = append(res.NewOutcomes, NewOutcome{Name: o.Name(), Outcome: "fail-open outside any scenario",
				Count: o.TrialFailOpen, Severity: string(classify.SevFailOpen), What: o.Breached()})
		}
	}
	for _, b := range base.Cells {
		if !seen[b.Key()] {
			res.Disappeared = append(res.Disappeared, b.Name())
		}
	}
	sort.Slice(res.Regressions, func(i, j int) bool { return res.Regressions[i].P < res.Regressions[j].P })
	sort.Slice(res.NewOutcomes, func(i, j int) bool {
		a, b := res.NewOutcomes[i], res.NewOutcomes[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Outcome < b.Outcome
	})
	sort.Strings(res.Disappeared)
	sort.Strings(res.Added)
	return res, nil
}

// WriteText renders the result for a terminal or a CI log.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "compared %d cell x scenario rows (one-sided Fisher, alpha %g)\n", r.Compared, r.Alpha)
	if len(r.Regressions) == 0 {
		b.WriteString("no significant regressions\n")
	}
	for _, g := range r.Regressions {
		fmt.Fprintf(&b, "REGRESSION %s: failures %d/%d (%.1f%%) -> %d/%d (%.1f%%), p=%.4g\n", g.Name,
			g.BaseFailures, g.BaseMeasured, 100*stats.Rate(g.BaseFailures, g.BaseMeasured),
			g.NewFailures, g.NewMeasured, 100*stats.Rate(g.NewFailures, g.NewMeasured), g.P)
	}
	for _, n := range r.NewOutcomes {
		tag := "new outcome"
		if n.Severity == string(classify.SevFailOpen) {
			tag = "NEW FAIL-OPEN OUTCOME"
		}
		what := ""
		if n.What != "" {
			what = ": " + n.What
		}
		fmt.Fprintf(&b, "%s %s: %s x%d (%s), never seen in the baseline%s\n", tag, n.Name, n.Outcome, n.Count, n.Severity, what)
	}
	for _, d := range r.Disappeared {
		fmt.Fprintf(&b, "disappeared %s: in the baseline, not in the new report\n", d)
	}
	for _, a := range r.Added {
		fmt.Fprintf(&b, "new cell %s: not in the baseline\n", a)
	}
	if r.Failed() {
		b.WriteString("FAIL\n")
	} else {
		b.WriteString("OK\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// Files reads two report.json files and compares them.
func Files(basePath, newPath string, alpha float64) (Result, error) {
	base, err := schema.ReadFile(basePath)
	if err != nil {
		return Result{}, fmt.Errorf("compare: %w", err)
	}
	cur, err := schema.ReadFile(newPath)
	if err != nil {
		return Result{}, fmt.Errorf("compare: %w", err)
	}
	return Compare(base, cur, alpha)
}
