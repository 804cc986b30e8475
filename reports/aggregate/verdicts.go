package aggregate

// The trials' own verdicts, tallied per cell and scenario (schema.Verdicts): which failures no
// known finding covers, which trials were fail-open or harness trouble. `sandcheck run` judges
// its exit code and prints its summary from them.

import (
	"maps"
	"slices"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Bounds on what the verdict tallies list, so they grow with variety, not trials.
const (
	maxEgressLines   = 3
	maxVerdictBreach = 5
)

type verdictAcc struct {
	v schema.Verdicts
}

type scenVerdictAcc struct {
	v schema.ScenarioVerdicts
}

// harnessSev says an outcome is our side's trouble or nothing measured, not the sandbox's.
func harnessSev(o model.Outcome) bool {
	s := o.Severity()
	return s == model.SevHarness || s == model.SevSkip
}

// addVerdicts folds a trial's verdicts into its cell's tallies.
func (c *cellAcc) addVerdicts(r model.Record) {
	v := &c.verdicts.v
	if _, ok := v.Hints[string(r.Outcome)]; !ok && r.Hint != "" {
		if v.Hints == nil {
			v.Hints = map[string]string{}
		}
		v.Hints[string(r.Outcome)] = schema.LeadingCause(r.Hint)
	}
	failOpen, harness := len(r.Egress) > 0, r.Outcome.Severity() == model.SevHarness
	if len(r.Egress) > 0 {
		v.Egress++
		for _, e := range r.Egress {
			if len(v.EgressLines) < maxEgressLines && !slices.Contains(v.EgressLines, e) {
				v.EgressLines = append(v.EgressLines, e)
			}
		}
	}
	explained, unknownHere := false, false // does a scenario verdict account for the record's outcome?
	for _, sc := range r.Scenarios {
		t := &c.scen[sc.Name].verdicts.v // Add made the row
		if sc.Outcome == r.Outcome {
			explained = true
		}
		if sc.Outcome == model.NotApplicable {
			t.NotApplicable++
		}
		if sc.Pass {
			continue
		}
		t.Failed++
		if t.FailedOutcomes == nil {
			t.FailedOutcomes, t.Hints = map[string]int{}, map[string]string{}
		}
		t.FailedOutcomes[string(sc.Outcome)]++
		if t.Hints[string(sc.Outcome)] == "" { // compact records carry no scenario hints: wait for one
			if h := schema.LeadingCause(sc.Hint); h != "" {
				t.Hints[string(sc.Outcome)] = h
			}
		}
		for _, b := range sc.Breaches {
			if len(t.Breaches) < maxVerdictBreach && !slices.Contains(t.Breaches, b) {
				t.Breaches = append(t.Breaches, b)
			}
		}
		switch {
		case sc.Known != "":
			v.Known++
			if t.Known == nil {
				t.Known = map[string]int{}
			}
			for _, id := range schema.SplitIDs(sc.Known) {
				t.Known[id]++
			}
		case harnessSev(sc.Outcome):
			harness = harness || sc.Outcome.Severity() == model.SevHarness
		default:
			v.Unknown++
			t.Unknown++
			unknownHere = true
			failOpen = failOpen || sc.Outcome.Severity() == model.SevFailOpen
		}
	}
	// A record whose failure no scenario verdict accounts for (no result line at all, or a
	// result contradicted by egress) is a failure of its own.
	sev := r.Outcome.Severity()
	if (!explained && (sev == model.SevFailOpen || sev == model.SevFailClosed)) || (len(r.Egress) > 0 && !unknownHere) {
		v.Unexplained++
		v.Unknown++
		failOpen = failOpen || sev == model.SevFailOpen
	}
	if failOpen {
		v.FailOpen++
	}
	if harness && !failOpen {
		v.Harness++
	}
}

func (x *verdictAcc) report() *schema.Verdicts {
	v := x.v
	v.EgressLines = slices.Clone(v.EgressLines)
	v.Hints = maps.Clone(v.Hints)
	return &v
}

func (x *scenVerdictAcc) report() *schema.ScenarioVerdicts {
	v := x.v
	v.FailedOutcomes, v.Known, v.Hints = maps.Clone(v.FailedOutcomes), maps.Clone(v.Known), maps.Clone(v.Hints)
	if len(v.Hints) == 0 {
		v.Hints = nil
	}
	v.Breaches = slices.Clone(v.Breaches)
	return &v
}
