package gate

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// Rules, as they appear in violations.
const (
	RuleRanNothing       = "ran-nothing"
	RuleNonEnforcing     = "non-enforcing"
	RuleHarness          = "harness-bound"
	RuleFailClosed       = "fail-closed-bound"
	RuleMinTrials        = "min-trials"
	RuleMinCells         = "min-cells"
	RuleMinScenarios     = "min-scenarios"
	RuleRequiredScenario = "required-scenario"
	RuleNotApplicable    = "not-applicable-bound"
)

// Group is where a violation is listed: what blocks outright, what a rate bound caught, and
// what lacks the trials to say either way.
type Group int

const (
	GroupBlocker Group = iota
	GroupFailClosed
	GroupEvidence
)

// groupOf places a rule: fail-open and coverage guards block outright; min-trials is missing
// evidence, not a finding.
func groupOf(rule string) Group {
	switch rule {
	case RuleFailClosed:
		return GroupFailClosed
	case RuleMinTrials:
		return GroupEvidence
	}
	return GroupBlocker
}

// blockerRank orders the blockers: fail-open first, then harness trouble, then coverage.
var blockerRank = map[string]int{RuleNonEnforcing: 0, RuleHarness: 1, RuleRanNothing: 2, RuleMinCells: 3, RuleMinScenarios: 4, RuleRequiredScenario: 5, RuleNotApplicable: 6}

// Violation is one reason the release does not pass.
type Violation struct {
	Rule    string
	Cell    string // the row's name ("" for whole-report rules); min-trials names the cell only
	Message string
}

// Group is where the violation is listed.
func (v Violation) Group() Group { return groupOf(v.Rule) }

func (v Violation) String() string {
	if v.Cell == "" {
		return fmt.Sprintf("%s: %s", v.Rule, v.Message)
	}
	return fmt.Sprintf("%s: %s: %s", v.Rule, v.Cell, v.Message)
}

// Accepted is a known finding whose failures the policy accepted (accept_known) in one row.
type Accepted struct {
	ID       string
	Row      string
	Failures int // failing trials the finding covered
	FailOpen int // of them, non-enforcing
	Trials   int // the row's trials
	What     string
}

func (a Accepted) String() string {
	kind := "fail-closed"
	if a.FailOpen > 0 {
		kind = "non-enforcing"
	}
	s := fmt.Sprintf("%s: %s: %s in %d of %d trials", a.ID, a.Row, kind, a.Failures, a.Trials)
	if a.What != "" {
		s += ": " + a.What
	}
	return s
}

// Result is the gate's judgement.
type Result struct {
	Violations []Violation // blockers (fail-open first), fail-closed bounds, insufficient evidence
	Accepted   []Accepted  // known findings accepted by the policy, each named
	Unused     []string    // accept_known ids no row showed: the list may be stale
	Rows       int         // rows judged
	Cells      int
	// Applicable is how many cell x scenario rows could be judged in at least one trial, of how
	// many: what the release was qualified on.
	Applicable struct{ Applicable, Rows int }
}

// Failed is the exit-1 condition.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

// Count counts the violations in group g.
func (r Result) Count(g Group) int {
	n := 0
	for _, v := range r.Violations {
		if v.Group() == g {
			n++
		}
	}
	return n
}

// row is what the rules look at: a cell x scenario row, or a cell's overall row when the cell
// has no scenario rows (every trial died before a scenario reported).
type row struct {
	cell, scenario string // cell name, scenario name
	whole          bool   // a cell's overall row standing in for scenario rows it never got
	schema.Counts
}

func (r row) name() string { return r.cell + " " + r.scenario }

// short is one line of evidence for a row still missing trials.
type short struct {
	scenario     string
	held, needed int
}

// Evaluate applies p (defaults filled by ParsePolicy/DefaultPolicy; a zero Policy is also
// defaulted) to rep, in a stable order. What fails is model's rule (model.Record.FailOpen and
// .Failure, tallied per row as schema.Decision) under the policy's acceptance: accept_known.
func Evaluate(rep *schema.Report, p Policy) Result {
	p.applyDefaults()
	var res Result
	add := func(rule, cell, format string, a ...any) {
		res.Violations = append(res.Violations, Violation{Rule: rule, Cell: cell, Message: fmt.Sprintf(format, a...)})
	}
	if len(rep.Cells) == 0 && len(rep.Overall) == 0 {
		add(RuleRanNothing, "", "the report holds no cells: the run measured nothing, which cannot qualify a release")
		return res
	}
	accept := model.AcceptIDs(p.AcceptKnown...)
	used := map[string]bool{}
	res.Cells = len(rep.Overall)

	var rows []row
	withRows := map[string]bool{}
	scenRows := map[string][]schema.Cell{}
	for _, c := range rep.Cells {
		rows = append(rows, row{c.CellRef.Name(), c.Scenario, false, c.Counts})
		withRows[c.CellID] = true
		scenRows[c.CellID] = append(scenRows[c.CellID], c)
	}
	for _, o := range rep.Overall {
		if !withRows[o.CellID] {
			rows = append(rows, row{o.Name(), "(no scenario reported)", true, o.Counts})
		}
	}
	res.Rows = len(rows)

	// Security first, and without a threshold: one escaped request is a finding. Per cell, the
	// trials whose fail-open evidence the policy does not accept, wherever it shows (a verdict,
	// or egress no accepted finding's breach lists, in a trial that timed out or crashed too).
	for _, o := range rep.Overall {
		n := o.FailOpenTrials(accept)
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("fail-open in %d of %d trials", n, o.Trials)
		if k := o.TimedOutFailOpen(accept); k > 0 {
			msg += fmt.Sprintf(" (%d timed out after it)", k)
		}
		add(RuleNonEnforcing, o.Name(), "%s: %s", msg, failOpenWhat(o, scenRows[o.CellID], accept))
	}

	shorts := map[string][]short{}
	var cellOrder []string
	for _, r := range rows {
		var unaccepted []string // ids a failure needs that the policy does not accept
		for _, d := range r.Decisions {
			if !d.Failure.Failed() {
				continue
			}
			if d.Failure.MetBy(accept) {
				for _, id := range d.Failure.IDs() {
					used[id] = true
				}
				continue
			}
			for _, id := range d.Failure.IDs() {
				if !accept.IDs[id] {
					unaccepted = append(unaccepted, id)
				}
			}
		}
		res.Accepted = append(res.Accepted, accepted(r, accept)...)
		unaccepted = slices.Compact(slices.Sorted(slices.Values(unaccepted)))

		na := r.NotApplicable
		if p.MaxNotApplicable != nil && r.Trials > 0 && float64(na) > *p.MaxNotApplicable*float64(r.Trials) {
			add(RuleNotApplicable, r.name(), "not applicable in %d of %d trials (%.1f%%), policy allows %.1f%%%s", na, r.Trials,
				100*stats.Rate(na, r.Trials), 100**p.MaxNotApplicable, exampleHint(r.Counts, model.NotApplicable))
		}

		needed := *p.MinTrials
		closed := r.ClosedTrials(accept)
		if closed == 0 {
			// With no failure the only question is whether there are trials enough to show the
			// bound; that is missing evidence, not a finding.
			needed = max(needed, cleanTrialsFor(*p.MaxFailClosedUpper, p.Interval))
		}
		allNA := r.Trials > 0 && na == r.Trials
		if r.Measured < needed && !allNA { // a scenario the target cannot express has nothing to show
			if _, ok := shorts[r.cell]; !ok {
				cellOrder = append(cellOrder, r.cell)
			}
			shorts[r.cell] = append(shorts[r.cell], short{r.scenario, r.Measured, needed})
		}
		if r.Measured == 0 || closed == 0 {
			continue // no rate to bound; insufficient evidence (or ran-nothing) speaks for it
		}
		upper := stats.Wilson(closed, r.Measured).High
		if p.Interval == "clopper-pearson" {
			upper = stats.ClopperPearson(closed, r.Measured, 0.05).High
		}
		if upper > *p.MaxFailClosedUpper {
			msg := fmt.Sprintf("fail-closed rate %d/%d = %.2f%%, 95%% upper bound %.2f%% exceeds %.2f%%: %s", closed, r.Measured,
				100*stats.Rate(closed, r.Measured), 100*upper, 100**p.MaxFailClosedUpper, closedWhat(r.Counts))
			if len(unaccepted) > 0 {
				msg += fmt.Sprintf(" (known finding %s, not accepted by the policy)", strings.Join(unaccepted, ", "))
			}
			add(RuleFailClosed, r.name(), "%s", msg)
		}
	}

	for _, o := range rep.Overall {
		if o.Trials > 0 && float64(o.Harness) > *p.MaxHarnessRate*float64(o.Trials) {
			add(RuleHarness, o.Name(), "%d of %d trials (%.1f%%) were harness errors or timeouts (%s), policy allows %.1f%%: they measured nothing, so the rest cannot speak for the cell%s",
				o.Harness, o.Trials, 100*stats.Rate(o.Harness, o.Trials), schema.OutcomeList(map[string]int{
					string(model.Timeout): o.Outcomes[string(model.Timeout)], string(model.HarnessError): o.Outcomes[string(model.HarnessError)]}, allOrder),
				100**p.MaxHarnessRate, exampleHint(o.Counts, model.Timeout, model.HarnessError))
		}
	}

	for _, cell := range cellOrder {
		add(RuleMinTrials, cell, "%s", shortLine(shorts[cell]))
	}
	if n := len(rep.Overall); n < p.MinCells {
		add(RuleMinCells, "", "%d cells ran, policy requires at least %d", n, p.MinCells)
	}
	measuredIn, naIn, trialsIn := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range rep.Cells {
		measuredIn[c.Scenario] += c.Measured
		naIn[c.Scenario] += c.NotApplicable
		trialsIn[c.Scenario] += c.Trials
		res.Applicable.Rows++
		if c.NotApplicable < c.Trials {
			res.Applicable.Applicable++
		}
	}
	if n := len(measuredIn); n < p.MinScenarios {
		add(RuleMinScenarios, "", "%d distinct scenarios ran, policy requires at least %d", n, p.MinScenarios)
	}
	for _, s := range p.RequiredScenarios {
		switch {
		case measuredIn[s] > 0:
		case trialsIn[s] > 0 && naIn[s] == trialsIn[s]:
			add(RuleRequiredScenario, "", "required scenario %q was not applicable in any of its %d trials: %s", s, trialsIn[s], naWhy(rep, s))
		default:
			add(RuleRequiredScenario, "", "required scenario %q was not measured in any cell", s)
		}
	}
	for _, id := range p.AcceptKnown {
		if !used[id] {
			res.Unused = append(res.Unused, id)
		}
	}
	sort.SliceStable(res.Violations, func(i, j int) bool {
		a, b := res.Violations[i], res.Violations[j]
		if a.Group() != b.Group() {
			return a.Group() < b.Group()
		}
		return a.Group() == GroupBlocker && blockerRank[a.Rule] < blockerRank[b.Rule]
	})
	return res
}

// accepted names the known findings the policy lets through in a row: per covering set of ids,
// the failing trials only accepting them lets through.
func accepted(r row, accept model.Accept) []Accepted {
	by := map[string]*Accepted{}
	for _, d := range r.Decisions {
		if !d.Failure.Failed() || !d.Failure.MetBy(accept) {
			continue
		}
		id := strings.Join(d.Failure.IDs(), ", ")
		a := by[id]
		if a == nil {
			a = &Accepted{ID: id, Row: r.name(), Trials: r.Trials, What: r.Breached()}
			by[id] = a
		}
		a.Failures += d.Trials
		if d.FailOpen.Failed() {
			a.FailOpen += d.Trials
		}
	}
	out := make([]Accepted, 0, len(by))
	for _, id := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[id])
	}
	return out
}

// failOpenWhat says what a cell's unaccepted fail-open trials let through: the scenario rows that
// failed open under the policy, each with its breaches and the findings it would need, and the
// egress no verdict's breach accounts for.
func failOpenWhat(o schema.Overall, rows []schema.Cell, accept model.Accept) string {
	var parts []string
	for _, r := range rows {
		n := r.FailOpenTrials(accept)
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%s non-enforcing in %d: %s", r.Scenario, n, r.Breached())
		var ids []string
		for _, d := range r.Decisions {
			if !d.FailOpen.MetBy(accept) {
				for _, id := range d.FailOpen.IDs() {
					if !accept.IDs[id] {
						ids = append(ids, id)
					}
				}
			}
		}
		if ids = slices.Compact(slices.Sorted(slices.Values(ids))); len(ids) > 0 {
			part += fmt.Sprintf(" (known finding %s, not accepted by the policy)", strings.Join(ids, ", "))
		}
		parts = append(parts, part)
	}
	if s := o.BreachList(); s != "" {
		parts = append(parts, "egress no verdict accounts for: "+s)
	} else if len(parts) == 0 {
		parts = append(parts, o.Breached())
	}
	return strings.Join(parts, "; ")
}

// naWhy is why a scenario was not applicable, from the first row's example.
func naWhy(rep *schema.Report, scenario string) string {
	for _, c := range rep.Cells {
		if c.Scenario == scenario {
			if ex, ok := c.Examples[string(model.NotApplicable)]; ok && ex.Hint != "" {
				return ex.Hint
			}
		}
	}
	return "no reason recorded"
}

var allOrder = func() []string {
	var s []string
	for _, o := range model.All {
		s = append(s, string(o))
	}
	return s
}()

// closedWhat says which fail-closed outcomes a row showed and why, from the worst one's example.
func closedWhat(c schema.Counts) string {
	fc := map[string]int{}
	var worst model.Outcome
	for o, n := range c.FailingOutcomes {
		if model.Outcome(o).Severity() == model.SevFailOpen {
			continue
		}
		fc[o] = n
		worst = model.Worst(worst, model.Outcome(o))
	}
	s := schema.OutcomeList(fc, allOrder)
	if ex, ok := c.Examples[string(worst)]; ok && ex.Hint != "" {
		s += " (" + ex.Hint + ")"
	}
	return s
}

// exampleHint is ": <hint>" of the first of os with an example hint, for harness lines.
func exampleHint(c schema.Counts, os ...model.Outcome) string {
	for _, o := range os {
		ex, ok := c.Examples[string(o)]
		if !ok {
			continue
		}
		h := ex.Hint
		if h == "" {
			h = ex.Error
		}
		if h != "" {
			return fmt.Sprintf("; e.g. trial %d: %s", ex.Trial, h)
		}
	}
	return ""
}

// shortLine is the one line for a cell missing trials: held / needed and the rows concerned.
func shortLine(ss []short) string {
	lo, hi, need := ss[0].held, ss[0].held, 0
	var names []string
	for _, s := range ss {
		lo, hi, need = min(lo, s.held), max(hi, s.held), max(need, s.needed)
		names = append(names, s.scenario)
	}
	held := fmt.Sprint(lo)
	if lo != hi {
		held = fmt.Sprintf("%d-%d", lo, hi)
	}
	slices.Sort(names)
	list := strings.Join(names, ", ")
	if len(names) > 4 {
		list = fmt.Sprintf("%s and %d more", strings.Join(names[:4], ", "), len(names)-4)
	}
	return fmt.Sprintf("%s measured trials held, %d needed (%d scenario(s): %s)", held, need, len(names), list)
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

var groupTitles = []struct {
	g     Group
	title string
}{
	{GroupBlocker, "blockers (fail-open first)"},
	{GroupFailClosed, "fail-closed bounds"},
	{GroupEvidence, "insufficient evidence (measured trials held / needed, per cell)"},
}

// WriteText prints the judgement grouped (blockers, fail-closed bounds, insufficient evidence,
// accepted known findings), then one verdict line starting PASS or FAIL.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	for _, g := range groupTitles {
		n := r.Count(g.g)
		if n == 0 {
			fmt.Fprintf(&b, "%s: none\n", g.title)
			continue
		}
		fmt.Fprintf(&b, "%s: %d\n", g.title, n)
		for _, v := range r.Violations {
			if v.Group() == g.g {
				b.WriteString("  " + v.String() + "\n")
			}
		}
	}
	if len(r.Accepted) > 0 || len(r.Unused) > 0 {
		fmt.Fprintf(&b, "accepted known findings (policy accept_known): %d\n", len(r.Accepted))
		for _, a := range r.Accepted {
			b.WriteString("  ACCEPTED " + a.String() + "\n")
		}
		for _, id := range r.Unused {
			b.WriteString("  accept_known lists " + id + ", which no row showed (fixed, or intermittent and absent from these trials)\n")
		}
	}
	b.WriteString(verdictLine(r) + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write gate verdict: %w", err)
	}
	return nil
}

func verdictLine(r Result) string {
	acc := ""
	if len(r.Accepted) > 0 {
		ids := map[string]bool{}
		for _, a := range r.Accepted {
			for _, id := range model.SplitIDs(a.ID) {
				ids[id] = true
			}
		}
		acc = fmt.Sprintf("; %d known finding(s) accepted by policy", len(ids))
	}
	if a := r.Applicable; a.Rows > 0 {
		acc += fmt.Sprintf("; applicable in %d of %d cell x scenario rows (%.0f%%)", a.Applicable, a.Rows, 100*stats.Rate(a.Applicable, a.Rows))
	}
	if !r.Failed() {
		return fmt.Sprintf("PASS: %d rows in %d cells within policy%s", r.Rows, r.Cells, acc)
	}
	open := 0
	for _, v := range r.Violations {
		if v.Rule == RuleNonEnforcing {
			open++
		}
	}
	return fmt.Sprintf("FAIL: %d blocker(s) (%d fail-open), %d fail-closed bound(s), %d cell(s) with insufficient evidence%s",
		r.Count(GroupBlocker), open, r.Count(GroupFailClosed), r.Count(GroupEvidence), acc)
}

// File evaluates the report.json at path; policyPath "" means DefaultPolicy.
func File(reportPath, policyPath string) (Result, error) {
	p := DefaultPolicy()
	if policyPath != "" {
		var err error
		if p, err = LoadPolicy(policyPath); err != nil {
			return Result{}, err
		}
	}
	rep, err := schema.ReadFile(reportPath)
	if err != nil {
		return Result{}, fmt.Errorf("gate: %w", err)
	}
	return Evaluate(rep, p), nil
}
