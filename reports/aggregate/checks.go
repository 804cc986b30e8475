package aggregate

import (
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// A row's breach checks (schema.Counts.Checks): which host or way its failures were about.

type checkKey struct {
	check   string
	outcome model.Outcome
}

// check counts each distinct check and outcome of a failing verdict's breaches once per trial.
// A breach with no check to name (legacy words) tells nothing and is left out.
func (x *acc) check(bs []model.Breach) {
	seen := map[checkKey]bool{}
	for _, b := range bs {
		k := checkKey{breachCheck(b), b.Outcome}
		if k.check == "" || seen[k] {
			continue
		}
		seen[k] = true
		if x.checks == nil {
			x.checks = map[checkKey]int{}
		}
		if _, ok := x.checks[k]; !ok && len(x.checks) >= maxBreachKinds {
			x.checkOverflow++
			continue
		}
		x.checks[k]++
	}
}

// breachCheck is a breach's check. A compact record keeps a covered breach's check only in its
// finding's id (TARGET:SCENARIO#CHECK, knownfindings.ID; wire/journal.Compacted).
func breachCheck(b model.Breach) string {
	if b.Check != "" {
		return b.Check
	}
	if ids := b.KnownIDs(); len(ids) == 1 {
		if _, check, ok := strings.Cut(ids[0], "#"); ok {
			return check
		}
	}
	return ""
}

// topChecks lists the most frequent checks (then by check and outcome, so shard order does not
// matter) and counts the observations left out.
func topChecks(m map[checkKey]int, overflow int) ([]schema.CheckCount, int) {
	all := make([]schema.CheckCount, 0, len(m))
	for k, n := range m {
		all = append(all, schema.CheckCount{Check: k.check, Outcome: k.outcome, Trials: n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Trials != all[j].Trials {
			return all[i].Trials > all[j].Trials
		}
		if all[i].Check != all[j].Check {
			return all[i].Check < all[j].Check
		}
		return all[i].Outcome < all[j].Outcome
	})
	other := overflow
	if len(all) > schema.MaxChecks {
		for _, c := range all[schema.MaxChecks:] {
			other += c.Trials
		}
		all = all[:schema.MaxChecks]
	}
	if len(all) == 0 {
		all = nil
	}
	return all, other
}
