// Package runsummary is what `sandcheck run` says when it ends, written from the report model
// (schema.Report, as reports/aggregate made it from the run's journal): the seed's "Observed"
// section per cell, the `--json` summary, and the verdict its exit code follows.
package runsummary

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// run is what `sandcheck run` accepts: every known finding (exit 0 when known findings cover
// every failure). It says so in --help.
var run = model.Accept{Every: true}

// cellView is one cell of the run as the report holds it: its trial-level row and its scenario
// rows, by scenario name.
type cellView struct {
	cell    model.Cell
	overall schema.Overall
	scen    map[string]schema.Cell
}

// view collects the report's rows of the run's cells, in the run's order; a cell with no trial
// yet has empty rows.
func view(rep *schema.Report, cells []model.Cell) []cellView {
	out := make([]cellView, 0, len(cells))
	for _, c := range cells {
		cv := cellView{cell: c, scen: map[string]schema.Cell{}}
		for _, o := range rep.Overall {
			if o.CellID == c.ID {
				cv.overall = o
			}
		}
		for _, r := range rep.Cells {
			if r.CellID == c.ID {
				cv.scen[r.Scenario] = r
			}
		}
		out = append(out, cv)
	}
	return out
}

// hint is the leading cause of the example trial of an outcome.
func hint(c schema.Counts, o model.Outcome) string {
	return schema.LeadingCause(c.Examples[string(o)].Hint)
}

func (c cellView) names() []string {
	var names []string
	for n := range c.scen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Observed writes the seed's "Observed" section for each of the run's cells: each outcome's
// count and rate, why (in the breach's own terms), and per scenario how often it failed.
func Observed(w io.Writer, rep *schema.Report, cells []model.Cell) {
	for _, c := range view(rep, cells) {
		fault := c.cell.Fault
		if fault == "" {
			fault = "none (healthy)"
		}
		target := c.cell.Target
		if c.cell.Version != "" {
			target += "@" + c.cell.Version
		}
		trials := c.overall.Trials
		fmt.Fprintf(w, "\nObserved: %s on %s as %s, fault %s, %d trials\n", target, c.cell.Host, model.AsUser(c.cell.User), fault, trials)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  OUTCOME\tCOUNT\tRATE\t95% CI (Wilson)\tSEVERITY")
		var outs []model.Outcome
		for o, k := range c.overall.Outcomes {
			if k > 0 {
				outs = append(outs, model.Outcome(o))
			}
		}
		sort.Slice(outs, func(i, j int) bool { return indexOf(outs[i]) < indexOf(outs[j]) })
		for _, o := range outs {
			k := c.overall.Outcomes[string(o)]
			ci := stats.Wilson(k, trials)
			fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t[%.1f%%, %.1f%%]\t%s\n", o, k, 100*stats.Rate(k, trials), 100*ci.Low, 100*ci.High, o.Severity())
		}
		tw.Flush()
		for _, o := range outs {
			if o == model.Correct {
				continue
			}
			if h := c.why(o); h != "" {
				fmt.Fprintf(w, "  why %s: %s\n", o, h)
			}
		}
		if c.overall.Egress > 0 {
			fmt.Fprintf(w, "  egress in %d of %d trials (fail-open unless a known finding's breach lists it): %s\n", c.overall.Egress, trials, strings.Join(c.overall.EgressLines, "; "))
		}
		c.printScenarios(w)
	}
}

// maxBreachLines bounds the breaches listed per scenario; the journal keeps them all.
const maxBreachLines = 3

// why explains an outcome of the cell: for a fail-open, a breach of a scenario that failed that
// way, in its own terms, else the trial's hint. Failures outside the known findings come first,
// then the most specific scenario (fewest breaches: an aggregate's first breach may be of
// another outcome).
func (c cellView) why(o model.Outcome) string {
	// Short of a fail-open, the trial's own hint names the root cause (which layer of the proxy
	// died, which condition degraded), which a breach such as "http: proxy dead" only restates.
	h := hint(c.overall.Counts, o)
	if o.Severity() != model.SevFailOpen && h != "" {
		return h
	}
	var cands []string
	for _, n := range c.names() {
		if t := c.scen[n]; t.FailingOutcomes[string(o)] > 0 && (len(t.Breaches) > 0 || hint(t.Counts, o) != "") {
			cands = append(cands, n)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := c.scen[cands[i]], c.scen[cands[j]]
		if ua, ub := a.FailingTrials(run) > 0, b.FailingTrials(run) > 0; ua != ub {
			return ua
		}
		return len(a.Breaches) < len(b.Breaches)
	})
	if len(cands) == 0 {
		return h
	}
	n := cands[0]
	t := c.scen[n]
	what := hint(t.Counts, o)
	if len(t.Breaches) > 0 {
		what = t.Breaches[0].What
	}
	if t.FailingTrials(run) == 0 && len(t.Known()) > 0 {
		what += " (known finding)"
	}
	return n + ": " + what
}

// printScenarios says how many applicable scenarios passed in every trial, lists the others with
// their breaches and known findings, and names known findings that never reproduced.
func (c cellView) printScenarios(w io.Writer) {
	names := c.names()
	var failed []string
	applicable, na := 0, 0
	for _, n := range names {
		t := c.scen[n]
		switch {
		case t.NotApplicable == t.Trials:
			na++
		case t.Failures+t.Harness > 0:
			applicable++
			failed = append(failed, n)
		default:
			applicable++
		}
	}
	if na > 0 {
		fmt.Fprintf(w, "  applicable: %s\n", c.applicableByFamily())
	}
	if len(names) >= 2 || len(failed) > 0 {
		line := fmt.Sprintf("  %d of %d applicable scenarios passed in every trial", applicable-len(failed), applicable)
		if na > 0 {
			line += fmt.Sprintf(", %d not applicable", na)
		}
		if len(failed) > 0 {
			line += "; the others:"
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range failed {
		row := c.scen[n]
		var parts []string
		for o, k := range row.FailingOutcomes {
			parts = append(parts, fmt.Sprintf("%s %d/%d", o, k, row.Trials))
		}
		for _, o := range []model.Outcome{model.HarnessError, model.Timeout} {
			if k := row.Outcomes[string(o)]; k > 0 {
				parts = append(parts, fmt.Sprintf("%s %d/%d", o, k, row.Trials))
			}
		}
		sort.Strings(parts)
		note := ""
		if ids := row.KnownIDs(); len(ids) > 0 {
			note = "  (known finding " + strings.Join(ids, ", ") + ")"
			if k := row.FailingTrials(run); k > 0 {
				note = fmt.Sprintf("  (%d of %d failures outside the known findings %s)", k, row.Failures, strings.Join(ids, ", "))
			}
		}
		fmt.Fprintf(w, "    %s: %s%s\n", n, strings.Join(parts, ", "), note)
		// An aggregate's breaches are those of the per-check scenarios listed beside it.
		if row.Aggregate {
			continue
		}
		for i, b := range row.Breaches {
			if i == maxBreachLines {
				fmt.Fprintf(w, "      (+%d more)\n", len(row.Breaches)-i)
				break
			}
			fmt.Fprintf(w, "      breached: %s\n", b.What)
		}
	}
	for _, n := range names {
		row := c.scen[n]
		for _, id := range sortedKeys(row.Unreproduced) {
			if k := row.Unreproduced[id]; k == row.Trials {
				fmt.Fprintf(w, "  known finding %s did not reproduce in %d/%d trials (fixed?)\n", id, k, row.Trials)
			}
		}
	}
}

// applicableByFamily says, per family (the scenario name's first part; bypass/CLASS for bypass),
// how many of its scenarios could be judged in at least one trial: "network 9 of 9, ...".
func (c cellView) applicableByFamily() string {
	type count struct{ applicable, all int }
	by := map[string]*count{}
	var order []string
	for _, n := range c.names() {
		fam, rest, _ := strings.Cut(n, "/")
		if sub, _, ok := strings.Cut(rest, "/"); ok && fam == "bypass" {
			fam += "/" + sub
		}
		if by[fam] == nil {
			by[fam] = &count{}
			order = append(order, fam)
		}
		by[fam].all++
		if r := c.scen[n]; r.NotApplicable < r.Trials {
			by[fam].applicable++
		}
	}
	parts := make([]string, 0, len(order))
	for _, f := range order {
		parts = append(parts, fmt.Sprintf("%s %d of %d", f, by[f].applicable, by[f].all))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func indexOf(o model.Outcome) int {
	for i, x := range model.All {
		if x == o {
			return i
		}
	}
	return len(model.All)
}
