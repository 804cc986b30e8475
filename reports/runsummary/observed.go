// Package runsummary is what `sandcheck run` says when it ends, written from the report model
// (schema.Report, as reports/aggregate made it from the run's journal): the seed's "Observed"
// section per cell, the `--json` summary, and the verdict its exit code follows.
package runsummary

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/versions"
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

// Observed writes, for each of the run's cells, its verdict in one line (Headline), then the
// seed's "Observed" section: the trials counted by what they amount to outside the known
// findings `run` accepts, with how many of them showed known findings, why each failing outcome
// happened (in the breach's own terms), and per scenario how often it failed.
func Observed(w io.Writer, rep *schema.Report, cells []model.Cell) {
	for _, c := range view(rep, cells) {
		fmt.Fprintf(w, "\n%s\n", c.headline(rep))
		trials := c.overall.Trials
		outside, known := c.overall.OutcomesOutside(run)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  OUTCOME (outside known findings)\tTRIALS\tRATE\t95% CI (Wilson)\tSEVERITY\tWITH KNOWN FINDINGS")
		var outs []model.Outcome
		for o, k := range outside {
			if k > 0 {
				outs = append(outs, o)
			}
		}
		sort.Slice(outs, func(i, j int) bool { return indexOf(outs[i]) < indexOf(outs[j]) })
		for _, o := range outs {
			k := outside[o]
			ci := stats.Wilson(k, trials)
			fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t[%.1f%%, %.1f%%]\t%s\t%d\n", o, k, 100*stats.Rate(k, trials), 100*ci.Low, 100*ci.High, o.Severity(), known[o])
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

// headline is a cell's verdict in one line, in the user's terms: what ran, whether anything
// failed outside the known findings (and how), and which known findings remain, by severity.
func (c cellView) headline(rep *schema.Report) string {
	what := c.cell.Target
	if v := c.version(rep); v != "" {
		what += " " + v
	}
	what += " on " + c.cell.Host + " as " + model.AsUser(c.cell.User)
	if c.cell.Fault != "" {
		what += ", fault " + c.cell.Fault
	}
	o, trials := c.overall, c.overall.Trials
	if trials == 0 {
		return what + ": no trial finished: nothing was measured"
	}
	var news []string
	if n := o.FailOpenTrials(run); n > 0 {
		news = append(news, fmt.Sprintf("FAIL-OPEN in %d of %d trials", n, trials))
	}
	outside, _ := o.OutcomesOutside(run)
	for _, oc := range model.All {
		if oc.Severity() == model.SevFailClosed && outside[oc] > 0 {
			news = append(news, fmt.Sprintf("%s in %d of %d trials", oc, outside[oc], trials))
		}
	}
	var line string
	switch {
	case len(news) > 0:
		line = what + ": NEW: " + strings.Join(news, ", ")
	case o.NotApplicable == trials:
		line = what + fmt.Sprintf(": nothing applicable in %d trials (%s)", trials, hint(o.Counts, model.NotApplicable))
	default:
		line = what + fmt.Sprintf(": nothing new in %d trials", trials)
	}
	if h := o.Harness; h > 0 {
		line += fmt.Sprintf("; harness trouble in %d", h)
	}
	return line + c.remaining()
}

// remaining says which known findings the cell showed, by severity: "; 4 known fail-open
// findings remain (a, b, c and 1 more), 3 known fail-closed".
func (c cellView) remaining() string {
	open, closed := map[string]bool{}, map[string]bool{}
	for _, n := range c.names() {
		for key, k := range c.scen[n].Known() {
			for _, id := range model.SplitIDs(key) {
				if k.FailOpen > 0 {
					open[id] = true
				} else {
					closed[id] = true
				}
			}
		}
	}
	for id := range open {
		delete(closed, id)
	}
	var parts []string
	if len(open) > 0 {
		parts = append(parts, fmt.Sprintf("%d known fail-open finding(s) remain (%s)", len(open), shortIDs(open)))
	}
	if len(closed) > 0 {
		parts = append(parts, fmt.Sprintf("%d known fail-closed (%s)", len(closed), shortIDs(closed)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// shortIDs names findings by the scenario they are keyed to, at most three.
func shortIDs(ids map[string]bool) string {
	var names []string
	for _, id := range sortedKeys(ids) {
		name := id
		if _, rest, ok := strings.Cut(id, ":"); ok {
			name, _, _ = strings.Cut(rest, "#")
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// version is the version the cell ran: the one it chose, else its sandbox's as the host
// fingerprint recorded it.
func (c cellView) version(rep *schema.Report) string {
	if c.cell.Version != "" {
		return c.cell.Version
	}
	var fp struct {
		Sandbox string `json:"sandbox"`
	}
	if _, raw := rep.Fingerprint(c.cell.Host, c.cell.User, c.cell.Target); len(raw) > 0 && json.Unmarshal(raw, &fp) == nil {
		return versions.Extract(fp.Sandbox)
	}
	return ""
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

func sortedKeys[V any](m map[string]V) []string {
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
