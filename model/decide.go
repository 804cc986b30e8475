package model

import (
	"slices"
	"sort"
	"strings"
)

// What fails is decided here, once. Every tool that turns trials into a verdict — the trial's
// own line, the journal's compaction, the aggregate, `run`'s summary and exit code, `preflight`,
// `compare` and the gate — asks these questions of the same records and differs only in which
// known findings it accepts (Accept). None keeps a copy of the rule.

// Measured says whether an outcome says anything about the sandbox. Harness trouble, timeouts and
// inapplicable scenarios are counted apart: they are not the sandbox's doing, and counting them
// would let a broken harness look like a flaky sandbox.
func (o Outcome) Measured() bool {
	switch o {
	case HarnessError, Timeout, NotApplicable:
		return false
	}
	return o.Valid()
}

// Accept is which known findings a decision lets through. The zero value accepts none: every
// failure fails.
type Accept struct {
	// Every accepts every known finding: `run` and `compare` report a failure that known
	// findings cover in full, but do not fail on it.
	Every bool
	// FailClosed accepts every known finding that does not fail open: `preflight` warns of them.
	FailClosed bool
	// IDs are accepted by name whatever they fail as: the gate's accept_known.
	IDs map[string]bool
}

// AcceptIDs accepts the named findings.
func AcceptIDs(ids ...string) Accept {
	a := Accept{IDs: map[string]bool{}}
	for _, id := range ids {
		a.IDs[id] = true
	}
	return a
}

// accepts says whether a finding is let through, failing open or not.
func (a Accept) accepts(id string, failOpen bool) bool {
	return a.Every || a.IDs[id] || a.FailClosed && !failOpen
}

// Need is one known finding a failure needs accepted to be let through.
type Need struct {
	ID       string  `json:"id"`
	FailOpen bool    `json:"fail_open,omitempty"` // it covers a fail-open breach
	Outcome  Outcome `json:"outcome,omitempty"`   // the worst outcome of what it covers
}

// Requirement is what it takes to let a failure through: the known findings that cover it, all
// of which must be accepted; Uncovered, when some part of it no known finding covers, is that
// part's worst outcome, and then nothing lets it through. The zero value is nothing failed.
type Requirement struct {
	Needs     []Need  `json:"needs,omitempty"`
	Uncovered Outcome `json:"uncovered,omitempty"`
}

// Failed says whether there is anything to let through.
func (q Requirement) Failed() bool { return q.Uncovered != "" || len(q.Needs) > 0 }

// MetBy says whether a lets the failure through: nothing failed, or every finding it needs is
// accepted and no part of it is uncovered.
func (q Requirement) MetBy(a Accept) bool {
	if q.Uncovered != "" {
		return false
	}
	for _, n := range q.Needs {
		if !a.accepts(n.ID, n.FailOpen) {
			return false
		}
	}
	return true
}

// Outside is the worst outcome of what a does not let through ("" when it lets all through): what
// a failing trial amounts to once the accepted known findings are set aside.
func (q Requirement) Outside(a Accept) Outcome {
	o := q.Uncovered
	for _, n := range q.Needs {
		if !a.accepts(n.ID, n.FailOpen) {
			o = worstOf(o, n.Outcome)
		}
	}
	return o
}

// LetsSomeThrough says whether a lets through at least one known finding q needs: the trial
// showed known findings, whatever else it showed.
func (q Requirement) LetsSomeThrough(a Accept) bool {
	for _, n := range q.Needs {
		if a.accepts(n.ID, n.FailOpen) {
			return true
		}
	}
	return false
}

// IDs are the findings needed, sorted.
func (q Requirement) IDs() []string {
	out := make([]string, 0, len(q.Needs))
	for _, n := range q.Needs {
		out = append(out, n.ID)
	}
	return out
}

// Key names the requirement, for tallies: the same requirement, the same key.
func (q Requirement) Key() string {
	var b strings.Builder
	if q.Uncovered != "" {
		b.WriteString("!" + string(q.Uncovered))
	}
	for i, n := range q.Needs {
		if i > 0 || q.Uncovered != "" {
			b.WriteString(", ")
		}
		if n.FailOpen {
			b.WriteString("open:")
		}
		b.WriteString(n.ID + "=" + string(n.Outcome))
	}
	return b.String()
}

// worstOf is the worse of two outcomes, "" being none.
func worstOf(a, b Outcome) Outcome {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return Worst(a, b)
}

// requirement gathers needs and uncovered parts, each finding once (fail-open if any use is,
// its worst outcome), the worst outcome of the uncovered parts.
type requirement struct {
	needs     map[string]Need
	uncovered Outcome
}

// need records that ids together cover a part failing as o (none: the part is uncovered).
func (r *requirement) need(ids []string, failOpen bool, o Outcome) {
	if len(ids) == 0 {
		r.uncover(o)
		return
	}
	if r.needs == nil {
		r.needs = map[string]Need{}
	}
	for _, id := range ids {
		n := r.needs[id]
		r.needs[id] = Need{ID: id, FailOpen: n.FailOpen || failOpen, Outcome: worstOf(n.Outcome, o)}
	}
}

// uncover records a part no known finding covers, failing as o.
func (r *requirement) uncover(o Outcome) { r.uncovered = worstOf(r.uncovered, o) }

func (r *requirement) add(q Requirement) {
	if q.Uncovered != "" {
		r.uncover(q.Uncovered)
	}
	for _, n := range q.Needs {
		r.need([]string{n.ID}, n.FailOpen, n.Outcome)
	}
}

func (r requirement) done() Requirement {
	q := Requirement{Uncovered: r.uncovered}
	for _, n := range r.needs {
		q.Needs = append(q.Needs, n)
	}
	sort.Slice(q.Needs, func(i, j int) bool { return q.Needs[i].ID < q.Needs[j].ID })
	return q
}

// failsOpen says whether a breach is a security one.
func (b Breach) failsOpen() bool { return b.Outcome.Severity() == SevFailOpen }

// Failed says whether the verdict is a failure of the sandbox: measured, and not what the spec
// expects of a healthy one; a non-enforcing verdict always (no spec can pass a fail-open).
// Harness trouble and not-applicable are not failures (see Measured).
func (s Scenario) Failed() bool {
	return s.Outcome.Measured() && (!s.Pass || s.Outcome.Severity() == SevFailOpen)
}

// Failure is what it takes to let the verdict's failure through: the finding of every breach.
// A failing verdict with no breaches, or whose outcome none of its breaches shows, is uncovered.
func (s Scenario) Failure() Requirement {
	if !s.Failed() {
		return Requirement{}
	}
	var r requirement
	shown := false
	for _, b := range s.Breaches {
		shown = shown || b.Outcome == s.Outcome
		r.need(b.KnownIDs(), b.failsOpen(), b.Outcome)
	}
	if !shown {
		r.uncover(s.Outcome)
	}
	return r.done()
}

// FailOpen is what it takes to let the verdict's fail-open part through: the finding of every
// fail-open breach. A non-enforcing verdict that no fail-open breach explains is uncovered.
func (s Scenario) FailOpen() Requirement {
	if !s.Failed() {
		return Requirement{}
	}
	var r requirement
	shown := false
	for _, b := range s.Breaches {
		if b.failsOpen() {
			shown = true
			r.need(b.KnownIDs(), true, b.Outcome)
		}
	}
	if s.Outcome.Severity() == SevFailOpen && !shown {
		r.uncover(s.Outcome)
	}
	return r.done()
}

// Covered says whether a lets the verdict's failure through in full.
func (s Scenario) Covered(a Accept) bool { return s.Failed() && s.Failure().MetBy(a) }

// FailsOutside says whether the verdict failed in a way a does not let through.
func (s Scenario) FailsOutside(a Accept) bool { return s.Failed() && !s.Failure().MetBy(a) }

// FailOpen is what it takes to let the trial's fail-open evidence through: every fail-open
// breach's finding, and, for every egress line the fixture servers logged, the finding of a
// fail-open breach that lists it. An egress line no breach lists, a non-enforcing trial outcome
// no verdict explains, or a verdict's uncovered fail-open is uncovered: no acceptance lets it
// through. Another verdict being non-enforcing never accounts for a line it does not list.
func (r Record) FailOpen() Requirement {
	var q requirement
	shown := false
	for _, s := range r.Scenarios {
		q.add(s.FailOpen())
		shown = shown || s.Failed() && s.Outcome.Severity() == SevFailOpen
	}
	owners := r.egressOwners()
	for _, e := range r.Egress {
		ids, ok := owners[e]
		if !ok {
			q.uncover(NonEnforcing)
			continue
		}
		// Listed by several breaches: one of them is enough, so the least demanding is taken
		// (uncovered only if every lister is).
		best := ""
		for _, id := range ids {
			if id != "" && (best == "" || len(SplitIDs(id)) < len(SplitIDs(best))) {
				best = id
			}
		}
		q.need(SplitIDs(best), true, NonEnforcing)
	}
	if r.Outcome.Severity() == SevFailOpen && !shown && len(r.Egress) == 0 {
		q.uncover(r.Outcome) // a non-enforcing trial no verdict and no egress line explains
	}
	return q.done()
}

// egressOwners maps each egress line a fail-open breach of a failed verdict lists to the Known
// of every such breach.
func (r Record) egressOwners() map[string][]string {
	owners := map[string][]string{}
	for _, s := range r.Scenarios {
		if !s.Failed() {
			continue
		}
		for _, b := range s.Breaches {
			if b.failsOpen() {
				for _, e := range b.Egress {
					owners[e] = append(owners[e], b.Known)
				}
			}
		}
	}
	return owners
}

// UnownedEgress lists the egress lines no fail-open breach of a failed verdict lists: fail-open
// that nothing but the fixture servers' log explains.
func (r Record) UnownedEgress() []string {
	owners := r.egressOwners()
	var out []string
	for _, e := range r.Egress {
		if _, ok := owners[e]; !ok {
			out = append(out, e)
		}
	}
	return out
}

// Failure is what it takes to let every failure of the trial through: each failing verdict's,
// its fail-open evidence, and, for a trial whose outcome is a failure that no verdict shows (it
// died before any scenario reported), the trial itself, which nothing covers.
func (r Record) Failure() Requirement {
	var q requirement
	q.add(r.FailOpen())
	explained := false
	for _, s := range r.Scenarios {
		q.add(s.Failure())
		explained = explained || s.Outcome == r.Outcome
	}
	if sev := r.Outcome.Severity(); !explained && (sev == SevFailOpen || sev == SevFailClosed) {
		q.uncover(r.Outcome)
	}
	return q.done()
}

// Measured says whether the trial says anything about the sandbox: fail-open evidence, or a
// verdict (or, with none, the trial's outcome) that is measured.
func (r Record) Measured() bool {
	if r.FailOpen().Failed() {
		return true
	}
	if len(r.Scenarios) == 0 {
		return r.Outcome.Measured()
	}
	for _, s := range r.Scenarios {
		if s.Outcome.Measured() {
			return true
		}
	}
	return false
}

// Harness says whether the trial had harness trouble: a harness error or timeout of the trial or
// one of its verdicts. A trial that streamed egress measured a fail-open, whatever became of it.
func (r Record) Harness() bool {
	if len(r.Egress) > 0 {
		return false
	}
	if r.Outcome.Severity() == SevHarness {
		return true
	}
	return slices.ContainsFunc(r.Scenarios, func(s Scenario) bool { return s.Outcome.Severity() == SevHarness })
}

// Applicable counts the trial's verdicts that could be judged at all (not not-applicable), of
// how many.
func (r Record) Applicable() (applicable, of int) {
	for _, s := range r.Scenarios {
		if s.Outcome != NotApplicable {
			applicable++
		}
	}
	return applicable, len(r.Scenarios)
}

// KnownIDs are the known findings that cover the verdict's failure in full (nil when the verdict
// did not fail, or some part of it no finding covers).
func (s Scenario) KnownIDs() []string {
	q := s.Failure()
	if !q.Failed() || q.Uncovered != "" {
		return nil
	}
	return q.IDs()
}

// TrialOutcome is a trial's outcome from its verdicts, with the hint that explains it: the
// worst outcome of a verdict that did not pass (led by a failure no known finding covers);
// correct when every verdict passed and one at least was judged; not-applicable when none could
// be; harness-error when there were none at all.
func TrialOutcome(scs []Scenario) (Outcome, string) {
	if len(scs) == 0 {
		return HarnessError, "no spec ran (label filter matched nothing?)"
	}
	var failing []Outcome
	judged := false
	for _, s := range scs {
		if !s.Pass {
			failing = append(failing, s.Outcome)
		}
		judged = judged || s.Outcome != NotApplicable
	}
	switch {
	case len(failing) > 0:
	case !judged:
		return NotApplicable, "no scenario applies: " + scs[0].Name + ": " + scs[0].Hint
	default:
		return Correct, ""
	}
	o := Worst(failing...)
	for _, known := range []bool{false, true} {
		for _, s := range scs {
			if !s.Pass && s.Outcome == o && s.Hint != "" && s.Covered(Accept{Every: true}) == known {
				return o, s.Hint
			}
		}
	}
	return o, ""
}

// Outside is what the trial amounts to under a: correct when a lets its every failure through,
// else the worst outcome of what it does not (a trial that did not fail is what it is), and
// whether a let a known finding of it through. The run's progress and summary count trials so.
func (r Record) Outside(a Accept) (o Outcome, known bool) {
	q := r.Failure()
	if !q.Failed() {
		return r.Outcome, false
	}
	if o = q.Outside(a); o == "" {
		o = Correct
	}
	return o, q.LetsSomeThrough(a)
}
