package gate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// Rules, as they appear in violations.
const (
	RuleRanNothing       = "ran-nothing"
	RuleNonEnforcing     = "non-enforcing"
	RuleFailClosed       = "fail-closed-bound"
	RuleMinTrials        = "min-trials"
	RuleMinCells         = "min-cells"
	RuleMinScenarios     = "min-scenarios"
	RuleRequiredScenario = "required-scenario"
)

// Violation is one reason the release does not pass.
type Violation struct {
	Rule    string
	Cell    string // the row's name ("" for whole-report rules)
	Message string
}

func (v Violation) String() string {
	if v.Cell == "" {
		return fmt.Sprintf("%s: %s", v.Rule, v.Message)
	}
	return fmt.Sprintf("%s: %s: %s", v.Rule, v.Cell, v.Message)
}

// row is what the rules look at: a cell x scenario row, or a cell's overall row when the cell
// has no scenario rows (every trial died before a scenario reported).
type row struct {
	name  string
	fault string
	schema.Counts
}

// Evaluate applies p (defaults filled by ParsePolicy/DefaultPolicy; a zero Policy is also
// defaulted) to rep and returns every violation, in a stable order.
func Evaluate(rep *schema.Report, p Policy) []Violation {
	p.applyDefaults()
	var vs []Violation
	add := func(rule, cell, format string, a ...any) {
		vs = append(vs, Violation{Rule: rule, Cell: cell, Message: fmt.Sprintf(format, a...)})
	}
	if len(rep.Cells) == 0 && len(rep.Overall) == 0 {
		add(RuleRanNothing, "", "the report holds no cells: the run measured nothing, which cannot qualify a release")
		return vs
	}

	var rows []row
	withRows := map[string]bool{}
	for _, c := range rep.Cells {
		rows = append(rows, row{c.Name(), c.Fault, c.Counts})
		withRows[c.CellID] = true
	}
	for _, o := range rep.Overall {
		if !withRows[o.CellID] {
			rows = append(rows, row{o.Name() + " (no scenario reported)", o.Fault, o.Counts})
		}
	}

	for _, r := range rows {
		// Security first, and without a threshold: one escaped request is a finding.
		open := r.Outcomes[string(classify.NonEnforcing)]
		if p.ExpectedFailOpenInFaultCells && r.fault != "" {
			open = r.FailOpen // only the non-enforcing results the scenario did not expect
		}
		if open > 0 {
			add(RuleNonEnforcing, r.name, "non-enforcing observed in %d of %d trials: the denied host was reached (fail-open)", open, r.Trials)
		}
		if r.Measured < *p.MinTrials {
			add(RuleMinTrials, r.name, "%d measured trials, policy requires %d (%d trials ran)", r.Measured, *p.MinTrials, r.Trials)
		}
		if r.Measured == 0 {
			continue // no rate to bound; min-trials (or ran-nothing) speaks for it
		}
		upper := r.FailClosed.CI95[1]
		if p.Interval == "clopper-pearson" {
			upper = stats.ClopperPearson(r.FailClosed.Count, r.Measured, 0.05).High
		}
		if upper > *p.MaxFailClosedUpper {
			msg := fmt.Sprintf("fail-closed rate %d/%d = %.2f%%, 95%% upper bound %.2f%% exceeds %.2f%%", r.FailClosed.Count, r.Measured,
				100*r.FailClosed.Rate, 100*upper, 100**p.MaxFailClosedUpper)
			if r.FailClosed.Count == 0 {
				msg += fmt.Sprintf(" (no failures, but too few trials: %d clean trials needed)", cleanTrialsFor(*p.MaxFailClosedUpper, p.Interval))
			}
			add(RuleFailClosed, r.name, "%s", msg)
		}
	}

	if n := len(rep.Overall); n < p.MinCells {
		add(RuleMinCells, "", "%d cells ran, policy requires at least %d", n, p.MinCells)
	}
	measuredIn := map[string]int{}
	for _, c := range rep.Cells {
		measuredIn[c.Scenario] += c.Measured
	}
	if n := len(measuredIn); n < p.MinScenarios {
		add(RuleMinScenarios, "", "%d distinct scenarios ran, policy requires at least %d", n, p.MinScenarios)
	}
	for _, s := range p.RequiredScenarios {
		if measuredIn[s] == 0 {
			add(RuleRequiredScenario, "", "required scenario %q was not measured in any cell", s)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Rule == RuleNonEnforcing && vs[j].Rule != RuleNonEnforcing })
	return vs
}

// cleanTrialsFor is the fewest failure-free trials whose 95% upper bound is within bound.
func cleanTrialsFor(bound float64, interval string) int {
	if interval == "clopper-pearson" {
		// Two-sided 95% exact upper at k=0 is 1-0.025^(1/n).
		return int(math.Ceil(math.Log(0.025) / math.Log1p(-bound)))
	}
	z2 := stats.Z95 * stats.Z95
	return int(math.Ceil(z2 * (1 - bound) / bound))
}

// WriteText prints the verdict: every violation, then PASS or FAIL.
func WriteText(w io.Writer, vs []Violation) error {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("VIOLATION " + v.String() + "\n")
	}
	if len(vs) == 0 {
		b.WriteString("PASS: no violations\n")
	} else {
		fmt.Fprintf(&b, "FAIL: %d violation(s)\n", len(vs))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write gate verdict: %w", err)
	}
	return nil
}

// File evaluates the report.json at path; policyPath "" means DefaultPolicy.
func File(reportPath, policyPath string) ([]Violation, error) {
	p := DefaultPolicy()
	if policyPath != "" {
		var err error
		if p, err = LoadPolicy(policyPath); err != nil {
			return nil, err
		}
	}
	rep, err := schema.ReadFile(reportPath)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	return Evaluate(rep, p), nil
}
