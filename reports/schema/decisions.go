package schema

import (
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// Decision is how some of a row's trials stand against the known findings: Trials of them failed
// in a way that needs Failure accepted to be let through, and whose fail-open part needs
// FailOpen (model.Scenario.Failure and .FailOpen for a scenario row, model.Record's for a cell's
// overall row). The report keeps the requirements, not a verdict, so that `run` (every known
// finding accepted), `compare` and the gate (its accept_known) each decide from the same
// trials by the one rule in model, under their own acceptance.
type Decision struct {
	Failure  model.Requirement `json:"failure"`
	FailOpen model.Requirement `json:"fail_open,omitempty"`
	// Outcome is the trials' own outcome, as the row counts it: what their failure amounts to
	// once a tool's accepted findings are set aside is Failure.Outside (OutcomesOutside).
	Outcome  model.Outcome `json:"outcome"`
	Trials   int           `json:"trials"`
	TimedOut int           `json:"timed_out,omitempty"` // of them, trials killed at their deadline
}

// Key is the pair of requirements: trials with the same key are decided alike.
func (d Decision) Key() string {
	return d.Failure.Key() + "|" + d.FailOpen.Key() + "|" + string(d.Outcome)
}

// MaxDecisions bounds the distinct decisions a row keeps. Past it, the rest are merged into one
// that no acceptance lets through (its parts uncovered): a report may overstate a failure, never
// hide one.
const MaxDecisions = 64

// FailOpenTrials counts the trials whose fail-open evidence a does not let through.
func (c Counts) FailOpenTrials(a model.Accept) int {
	n := 0
	for _, d := range c.Decisions {
		if !d.FailOpen.MetBy(a) {
			n += d.Trials
		}
	}
	return n
}

// TimedOutFailOpen counts, of FailOpenTrials, those killed at their deadline.
func (c Counts) TimedOutFailOpen(a model.Accept) int {
	n := 0
	for _, d := range c.Decisions {
		if !d.FailOpen.MetBy(a) {
			n += d.TimedOut
		}
	}
	return n
}

// FailingTrials counts the trials that failed in a way a does not let through, fail-open or not.
func (c Counts) FailingTrials(a model.Accept) int {
	n := 0
	for _, d := range c.Decisions {
		if !d.Failure.MetBy(a) {
			n += d.Trials
		}
	}
	return n
}

// ClosedTrials counts the trials that failed in a way a does not let through while their fail-open
// part, if any, is let through: failures of availability, not of security.
func (c Counts) ClosedTrials(a model.Accept) int {
	n := 0
	for _, d := range c.Decisions {
		if !d.Failure.MetBy(a) && d.FailOpen.MetBy(a) {
			n += d.Trials
		}
	}
	return n
}

// KnownCount is how often known findings covered a failure of the row in full.
type KnownCount struct {
	Trials   int `json:"trials"`    // failing trials they covered
	FailOpen int `json:"fail_open"` // of them, with a fail-open part
}

// Known counts the failures that known findings cover in full, keyed by the covering ids (sorted,
// ", "-joined: one failure may need several findings). They are still failures: whoever decides
// lets them through only by accepting every id of the key.
func (c Counts) Known() map[string]KnownCount {
	out := map[string]KnownCount{}
	for _, d := range c.Decisions {
		if !d.Failure.Failed() || d.Failure.Uncovered != "" {
			continue
		}
		key := strings.Join(d.Failure.IDs(), ", ")
		k := out[key]
		k.Trials += d.Trials
		if d.FailOpen.Failed() {
			k.FailOpen += d.Trials
		}
		out[key] = k
	}
	return out
}

// KnownIDs lists the keys of Known, sorted.
func (c Counts) KnownIDs() []string {
	known := c.Known()
	ids := make([]string, 0, len(known))
	for id := range known {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// KnownFailures is the number of failures covered in full by known findings.
func (c Counts) KnownFailures() int {
	n := 0
	for _, k := range c.Known() {
		n += k.Trials
	}
	return n
}

// LeadingCause keeps a hint's leading cause, before the per-channel details ("; ").
func LeadingCause(hint string) string {
	if i := strings.Index(hint, "; "); i > 0 {
		return hint[:i]
	}
	return hint
}

// OutcomesOutside counts the row's trials by what they amount to under a (model.Record.Outside):
// a trial whose failure a lets through in full counts as correct, one whose failure it lets
// through in part by what is left; the others as they are. known counts, per outcome so counted,
// the trials a let a known finding through in: failures still, to report.
func (c Counts) OutcomesOutside(a model.Accept) (outside, known map[model.Outcome]int) {
	outside, known = map[model.Outcome]int{}, map[model.Outcome]int{}
	for o, n := range c.Outcomes {
		outside[model.Outcome(o)] += n
	}
	for _, d := range c.Decisions {
		o := d.Failure.Outside(a)
		if o == "" {
			o = model.Correct
		}
		outside[d.Outcome] -= d.Trials
		outside[o] += d.Trials
		if d.Failure.LetsSomeThrough(a) {
			known[o] += d.Trials
		}
	}
	for o, n := range outside {
		if n <= 0 {
			delete(outside, o)
		}
	}
	return outside, known
}
