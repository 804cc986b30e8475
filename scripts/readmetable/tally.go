package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// tally is what one table cell says of its specs: how many passed in every trial, how many were
// not-applicable in every trial, and each failing one with its outcomes.
type tally struct {
	pass, na, total int
	fails           []string
}

// count adds one spec, named without prefix in the failure list; markKnown marks a failing spec
// whose every failure is a known finding.
func (t *tally) count(c schema.Cell, prefix string, markKnown bool) {
	t.total++
	switch {
	case c.Trials > 0 && c.Outcomes["not-applicable"] == c.Trials:
		t.na++
	case c.Failures == 0 && c.Measured == c.Trials:
		t.pass++
	default:
		var outs []string
		for o, n := range c.Outcomes {
			outs = append(outs, fmt.Sprintf("%s %d/%d", o, n, c.Trials))
		}
		sort.Strings(outs)
		f := fmt.Sprintf("`%s` %s", strings.TrimPrefix(c.Scenario, prefix), strings.Join(outs, ", "))
		if markKnown && c.Failures > 0 && c.KnownFailures() == c.Failures {
			f += " (known)"
		}
		t.fails = append(t.fails, f)
	}
}

// render prints the cell; naUnit follows the count where no spec applied ("n/a (3 specs)").
func (t tally) render(naUnit string) string {
	switch {
	case t.total == 0:
		return "not run"
	case t.pass+len(t.fails) == 0:
		return fmt.Sprintf("n/a (%d%s)", t.na, naUnit)
	}
	s := fmt.Sprintf("%d/%d pass", t.pass, t.pass+len(t.fails))
	if len(t.fails) == 0 {
		s = "✅ " + s
	} else {
		s = "❌ " + s + ": " + strings.Join(t.fails, "; ")
	}
	if t.na > 0 {
		s += fmt.Sprintf(" (%d n/a)", t.na)
	}
	return s
}
