package knownfindings

import (
	"strings"
	"sync"

	"github.com/sandcheck/sandcheck/model"
)

// Subject is what a verdict was observed on: the target, its version as the adapter reports it
// (normalised for ranges), the fault injected ("" = the healthy sandbox) and the user.
type Subject struct {
	Target  string
	Version string
	Fault   string
	User    string // who the sandbox ran as: unprivileged, root or an account's name
}

func (s Subject) String() string {
	out := s.Target
	if v := NormalizeVersion(s.Version); v != "" {
		out += " " + v
	} else {
		out += " (version unknown)"
	}
	if s.Fault != "" {
		out += " under fault " + s.Fault
	}
	if s.User != "" {
		out += " as " + s.User
	}
	return out
}

// Match is a breach and the finding that covers it.
type Match struct {
	Breach  model.Breach
	Finding Finding
}

// Decision is how a verdict stands against the known findings.
type Decision struct {
	// Verdict is the verdict decided: its breaches, plus, for a failing verdict whose outcome
	// none of them shows, one for the verdict as a whole (model.CheckTrial), each with the id of
	// the finding that covers it, if one does; and Unreproduced. What the journal records.
	Verdict model.Scenario
	// Matched are the breaches a finding covers, New the ones none does.
	Matched []Match
	New     []model.Breach
}

// Known is the ids of the findings that cover the verdict's failure in full, ", "-joined; "" when
// it did not fail or any breach is new.
func (d Decision) Known() string { return strings.Join(d.Verdict.KnownIDs(), ", ") }

// Decide judges a verdict of sub against the findings: a breach is covered when a finding of the
// same target, version, fault, user, scenario, check and outcome exists. A breach keyed to an
// aggregate scenario, or to the verdict as a whole, is never covered, so an aggregate is known
// only through its checks' findings, and an outcome no breach shows stands unexplained. Whether
// a covered failure is let through is not decided here: model.Accept decides, per tool.
func (l List) Decide(sub Subject, v model.Scenario) Decision {
	d := Decision{Verdict: v}
	var applicable []Finding
	if sub.Target == l.Target {
		for _, f := range l.Findings {
			if f.appliesTo(sub) {
				applicable = append(applicable, f)
			}
		}
	}
	shown := map[string]bool{}
	d.Verdict.Breaches = nil
	if !v.Pass {
		bs := append([]model.Breach(nil), v.Breaches...)
		if !showsOutcome(bs, v.Outcome) {
			what := string(v.Outcome)
			if v.Hint != "" {
				what += ": " + v.Hint
			}
			bs = append(bs, model.Breach{Scenario: v.Name, Check: model.CheckTrial, Outcome: v.Outcome, What: what})
		}
		for _, b := range bs {
			b.Known = ""
			f, ok := cover(applicable, b, v.Aggregate && b.Scenario == v.Name)
			if ok {
				b.Known = f.ID
				d.Matched = append(d.Matched, Match{b, f})
				shown[f.ID] = true
			} else {
				d.New = append(d.New, b)
			}
			d.Verdict.Breaches = append(d.Verdict.Breaches, b)
		}
	}
	d.Verdict.Unreproduced = ""
	if judged(v.Outcome, d.Verdict.Breaches) {
		var missing []string
		for _, f := range applicable {
			if f.Scenario == v.Name && !shown[f.ID] {
				missing = append(missing, f.ID)
			}
		}
		d.Verdict.Unreproduced = strings.Join(missing, ", ")
	}
	return d
}

// Decide judges a verdict against the list of sub's target (none: nothing is known).
func (s Set) Decide(sub Subject, v model.Scenario) Decision {
	return s.For(sub.Target).Decide(sub, v)
}

// judged says whether a verdict's evidence can tell a finding is gone: not when nothing could be
// judged (harness trouble, a timeout, not applicable) or the trial failed as a whole.
func judged(o model.Outcome, bs []model.Breach) bool {
	switch o {
	case model.HarnessError, model.Timeout, model.NotApplicable:
		return false
	}
	for _, b := range bs {
		if b.Check == model.CheckTrial {
			return false
		}
	}
	return true
}

func showsOutcome(bs []model.Breach, o model.Outcome) bool {
	for _, b := range bs {
		if b.Outcome == o {
			return true
		}
	}
	return false
}

// cover finds the finding that covers b. A breach of an aggregate (own marks one keyed to the
// aggregate verdict itself) or of a verdict as a whole is never covered.
func cover(fs []Finding, b model.Breach, own bool) (Finding, bool) {
	if own || IsAggregate(b.Scenario) || b.Check == model.CheckTrial {
		return Finding{}, false
	}
	for _, f := range fs {
		if f.Scenario == b.Scenario && f.Check == b.Check && f.Matches(b.Outcome) {
			return f, true
		}
	}
	return Finding{}, false
}

// aggregates are the scenarios whose verdict sums up other scenarios' checks, as their families
// declare them (DeclareAggregate). A finding is never keyed to one of them: it would hide every
// new failure of the checks inside.
var (
	aggMu      sync.Mutex
	aggregates = map[string]string{}
)

// DeclareAggregate says that a family's scenario sums up the checks of others (sums says which,
// for messages). Families declare their aggregates from init, with the scenario's id.
func DeclareAggregate(scenario, sums string) string {
	aggMu.Lock()
	defer aggMu.Unlock()
	aggregates[scenario] = sums
	return scenario
}

// IsAggregate reports whether a scenario's verdict sums up the checks of other scenarios.
func IsAggregate(scenario string) bool {
	aggMu.Lock()
	defer aggMu.Unlock()
	_, ok := aggregates[scenario]
	return ok
}

func aggregateOf(scenario string) (string, bool) {
	aggMu.Lock()
	defer aggMu.Unlock()
	what, ok := aggregates[scenario]
	return what, ok
}

// Aggregates lists the aggregate scenarios declared.
func Aggregates() []string {
	aggMu.Lock()
	defer aggMu.Unlock()
	out := make([]string, 0, len(aggregates))
	for s := range aggregates {
		out = append(out, s)
	}
	return out
}
