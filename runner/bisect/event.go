package bisect

import (
	"fmt"
	"math"
	"sort"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// Event is what the search decides on: in a trial, one scenario reported one outcome (or, with
// Not, did not). It is the event whose rate differs most between the good and the bad version,
// oriented so that the bad version shows it more often: a trial "looks bad" when it shows it.
type Event struct {
	Scenario string `json:"scenario"`
	Outcome  string `json:"outcome"`
	Not      bool   `json:"not,omitempty"` // the event is "did not report Outcome"
	// Counts at the endpoints: trials showing the event / trials.
	GoodK int `json:"good_events"`
	GoodN int `json:"good_trials"`
	BadK  int `json:"bad_events"`
	BadN  int `json:"bad_trials"`
	// P is the two-sided Fisher exact p-value of the endpoints' difference.
	P float64 `json:"p"`
}

func (e Event) String() string {
	not := ""
	if e.Not {
		not = "not "
	}
	return fmt.Sprintf("%s %s%s (good %d/%d, bad %d/%d, Fisher p=%.2g)", e.Scenario, not, e.Outcome, e.GoodK, e.GoodN, e.BadK, e.BadN, e.P)
}

// Shows reports whether a trial shows the event.
func (e Event) Shows(rec model.Record) bool {
	return reported(rec, e.Scenario, e.Outcome) != e.Not
}

// Measures says whether rec is evidence either way: its scenario (or, where it did not report,
// the trial) has an outcome that says something about the sandbox. A harness error, a timeout or
// a not-applicable is no evidence for "like the good one" nor for "like the bad one", unless it
// is the very outcome the endpoints differ by.
func (e Event) Measures(rec model.Record) bool {
	o := outcomeOf(rec, e.Scenario)
	return o.Measured() || string(o) == e.Outcome
}

// reported says whether rec's scenario reported outcome.
func reported(rec model.Record, scenario, outcome string) bool {
	return string(outcomeOf(rec, scenario)) == outcome
}

// outcomeOf is rec's scenario's outcome. A trial where the scenario did not report at all (the
// sandbox never started; a build the adapter cannot drive) counts under the trial's own outcome.
func outcomeOf(rec model.Record, scenario string) model.Outcome {
	for _, s := range rec.Scenarios {
		if s.Name == scenario {
			return s.Outcome
		}
	}
	return rec.Outcome
}

// chooseEvent finds the (scenario, outcome) whose rate differs most between the endpoints
// (smallest two-sided Fisher p, then the largest difference, then by name).
func chooseEvent(good, bad []model.Record) (Event, error) {
	type key struct{ scenario, outcome string }
	cands := map[key]bool{}
	for _, rs := range [][]model.Record{good, bad} {
		for _, r := range rs {
			for _, s := range r.Scenarios {
				cands[key{s.Name, string(s.Outcome)}] = true
			}
		}
	}
	if len(cands) == 0 {
		return Event{}, fmt.Errorf("no scenario reported at the endpoints (label filter matched nothing?)")
	}
	var all []Event
	for k := range cands {
		e := Event{Scenario: k.scenario, Outcome: k.outcome, GoodN: len(good), BadN: len(bad)}
		for _, r := range good {
			if reported(r, k.scenario, k.outcome) {
				e.GoodK++
			}
		}
		for _, r := range bad {
			if reported(r, k.scenario, k.outcome) {
				e.BadK++
			}
		}
		if rate(e.BadK, e.BadN) < rate(e.GoodK, e.GoodN) {
			// Orient: the bad version shows it more often.
			e.Not, e.GoodK, e.BadK = true, e.GoodN-e.GoodK, e.BadN-e.BadK
		}
		e.P = twoSided(e.GoodK, e.GoodN, e.BadK, e.BadN)
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.P != b.P {
			return a.P < b.P
		}
		da, db := rate(a.BadK, a.BadN)-rate(a.GoodK, a.GoodN), rate(b.BadK, b.BadN)-rate(b.GoodK, b.GoodN)
		if da != db {
			return da > db
		}
		// Prefer naming a failing outcome ("residue") over "not correct".
		if a.Not != b.Not {
			return !a.Not
		}
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		return a.Outcome < b.Outcome
	})
	return all[0], nil
}

func rate(k, n int) float64 { return stats.Rate(k, n) }

// twoSided is the two-sided Fisher exact p-value (twice the smaller one-sided tail, at most 1).
func twoSided(k1, n1, k2, n2 int) float64 {
	up, _ := stats.FisherRose(k1, n1, k2, n2)
	down, _ := stats.FisherRose(k2, n2, k1, n1)
	return math.Min(1, 2*math.Min(up, down))
}

// hypotheses turns the endpoints' rates of the event into the SPRT's: H0 "looks good" (the rate
// at the good version) against H1 "looks bad" (the rate at the bad version), each kept at least
// eps from 0 and 1 so that one odd trial never decides a step by itself.
func hypotheses(e Event, eps float64) (stats.Hypotheses, error) {
	p0 := math.Max(rate(e.GoodK, e.GoodN), eps)
	p1 := math.Min(rate(e.BadK, e.BadN), 1-eps)
	h := stats.Hypotheses{P0: p0, P1: p1}
	if !(p0 < p1) {
		return h, fmt.Errorf("the endpoints' rates of %s are too close to tell apart (%.2f vs %.2f)", e, p0, p1)
	}
	return h, nil
}
