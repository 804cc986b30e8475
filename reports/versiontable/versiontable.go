// Package versiontable reads a report (reports/schema) as versions x scenarios: for every series of
// cells that differ only in the sandbox version (same target, host, fault and labels), one table
// with the versions in release order, each cell the failure rate with its Wilson interval, the
// changes between adjacent versions (a significant rise or fall by one-sided Fisher exact test, or
// a different outcome in every trial), the first version where each regression appears, and the
// versions that failed to start or could not be driven, as bands. Formats render it; compare uses
// its changes. Pure: the report in, tables out.
package versiontable

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/versions"
)

// DefaultAlpha is the significance level of a change.
const DefaultAlpha = 0.05

// BandShare is the part of a version's measured scenario observations that must be
// sandbox-failed (some of them failures: scenarios that needed the sandbox to run) for the
// version to count as one that failed to start here.
const BandShare = 0.9

// Table is one series seen at several versions. A band version (the sandbox did not start, or
// could not be driven) is listed in Bands and left out of Changes and of deciding which rows are
// steady: its neighbours are compared with each other.
type Table struct {
	Series   schema.CellRef // without CellID and Version
	Versions []string       // oldest first
	Bands    []Band         // versions that failed to start, or that the adapter cannot drive
	Rows     []Row          // scenarios that failed or changed somewhere, sorted by name
	Steady   []string       // scenarios that passed in every version they ran in (not in Rows)
	Changes  []Change       // every change, in version order, then by scenario
	Alpha    float64
}

// Band is a version whose trials say nothing per scenario: the sandbox did not start
// (sandbox-failed) or the adapter could not drive it (not-applicable).
type Band struct {
	Version string
	Outcome string // sandbox-failed or not-applicable
	Hint    string // the sandbox's message, or the adapter's reason
	Trials  int
}

// Row is one scenario across the versions.
type Row struct {
	Scenario string
	Cells    []Cell // aligned with Table.Versions
}

// Cell is one scenario at one version.
type Cell struct {
	Has      bool // the scenario ran at this version
	Trials   int
	Measured int
	Failures int
	Rate     float64
	CI       [2]float64
	Outcome  string         // the most frequent outcome (failing outcomes win ties)
	Failing  string         // the most frequent outcome among the failures ("" without failures)
	Outcomes map[string]int // every outcome's count
	Pure     bool           // every trial had Outcome
	Known    bool           // every failure is covered by known findings
	FailOpen bool
	Band     string  // the version's band outcome, "" when none
	Change   *Change // against the previous version the scenario ran in
}

// Change is a scenario's difference between two adjacent versions (adjacent among those it ran in).
type Change struct {
	Scenario    string
	From, To    string // versions
	Kind        string // KindWorse, KindBetter or KindOutcome
	Before      string // e.g. "correct 4/4"
	After       string // e.g. "residue 4/4"
	P           float64
	Significant bool // P < Alpha: the rate change is more than chance at these counts
	// FirstSeen: a regression whose failing outcome appears here for the first time in the
	// series (no older version showed it): the first version where it appears.
	FirstSeen bool
}

// Kinds of change.
const (
	KindWorse   = "worse"   // the failure rate rose
	KindBetter  = "better"  // the failure rate fell
	KindOutcome = "outcome" // the same rate, but a different outcome in every trial (e.g. allowed-blocked -> sandbox-failed)
)

// String is one line: "filesystem/x: 0.0.23 → 0.0.24 worse: correct 4/4 → residue 4/4 (p=0.014, first seen in 0.0.24)".
func (c Change) String() string {
	sig := fmt.Sprintf("p=%.2g", c.P)
	switch {
	case c.Kind == KindOutcome:
		sig = "the same failure rate, another outcome in every trial"
	case !c.Significant:
		sig += ", not significant at these counts"
	}
	if c.FirstSeen {
		sig += ", first seen in " + c.To
	}
	return fmt.Sprintf("%s: %s → %s %s: %s → %s (%s)", c.Scenario, c.From, c.To, c.Kind, c.Before, c.After, sig)
}

// Build returns a table per series with at least two versions, in report order. alpha <= 0 means
// DefaultAlpha.
func Build(rep *schema.Report, alpha float64) []Table {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	type series struct {
		ref      schema.CellRef
		versions map[string]bool
		rows     map[string]map[string]schema.Cell // scenario -> version -> row
		overall  map[string]schema.Overall         // version -> overall row
	}
	var order []string
	all := map[string]*series{}
	key := func(r schema.CellRef) string {
		s := r.Series()
		return strings.Join([]string{s.Target, s.Host, s.Fault, s.Labels}, "\x00")
	}
	get := func(r schema.CellRef) *series {
		k := key(r)
		s := all[k]
		if s == nil {
			s = &series{ref: r.Series(), versions: map[string]bool{}, rows: map[string]map[string]schema.Cell{}, overall: map[string]schema.Overall{}}
			all[k] = s
			order = append(order, k)
		}
		return s
	}
	for _, o := range rep.Overall {
		if o.Version == "" {
			continue
		}
		s := get(o.CellRef)
		s.versions[o.Version] = true
		s.overall[o.Version] = o
	}
	for _, c := range rep.Cells {
		if c.Version == "" || c.Scenario == model.ScenarioDrivable {
			continue // an undrivable build is a band, not a row
		}
		s := get(c.CellRef)
		s.versions[c.Version] = true
		if s.rows[c.Scenario] == nil {
			s.rows[c.Scenario] = map[string]schema.Cell{}
		}
		s.rows[c.Scenario][c.Version] = c
	}
	var out []Table
	for _, k := range order {
		s := all[k]
		if len(s.versions) < 2 {
			continue
		}
		t := Table{Series: s.ref, Alpha: alpha}
		for v := range s.versions {
			t.Versions = append(t.Versions, v)
		}
		versions.Sort(t.Versions)
		bands := map[string]Band{}
		for _, v := range t.Versions {
			if b, ok := band(v, s.overall[v], s.rows); ok {
				bands[v] = b
				t.Bands = append(t.Bands, b)
			}
		}
		names := make([]string, 0, len(s.rows))
		for n := range s.rows {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			row := Row{Scenario: n}
			for _, v := range t.Versions {
				c, ok := s.rows[n][v]
				row.Cells = append(row.Cells, cellOf(c, ok, bands[v].Outcome))
			}
			changes := diff(&row, t.Versions, alpha)
			if len(changes) == 0 && steady(row) {
				t.Steady = append(t.Steady, n)
				continue
			}
			t.Changes = append(t.Changes, changes...)
			t.Rows = append(t.Rows, row)
		}
		sort.SliceStable(t.Changes, func(i, j int) bool {
			return versions.CompareStrings(t.Changes[i].To, t.Changes[j].To) < 0
		})
		out = append(out, t)
	}
	return out
}

// band says whether a version's trials failed to start (nearly every measured observation
// sandbox-failed) or were not applicable at all (the adapter cannot drive the build).
func band(v string, o schema.Overall, rows map[string]map[string]schema.Cell) (Band, bool) {
	if o.Trials > 0 && o.Outcomes[string(model.NotApplicable)] == o.Trials {
		hint := o.Examples[string(model.NotApplicable)].Hint
		for _, byVersion := range rows {
			if c, ok := byVersion[v]; ok && hint == "" {
				hint = c.Examples[string(model.NotApplicable)].Hint
			}
		}
		return Band{Version: v, Outcome: string(model.NotApplicable), Hint: hint, Trials: o.Trials}, true
	}
	// Nearly every observation sandbox-failed, and some where the scenario needed the sandbox
	// to run: a healthy sandbox refusing in every fail-closed scenario is no band.
	failed, unexpected, measured := 0, 0, 0
	hint := ""
	for _, byVersion := range rows {
		c, ok := byVersion[v]
		if !ok {
			continue
		}
		measured += c.Measured
		n := c.Outcomes[string(model.SandboxFailed)]
		failed += n
		unexpected += c.FailingOutcomes[string(model.SandboxFailed)]
		if n > 0 && hint == "" {
			hint = c.Examples[string(model.SandboxFailed)].Hint
		}
	}
	if measured == 0 || unexpected == 0 || float64(failed) < BandShare*float64(measured) {
		return Band{}, false
	}
	if ex, ok := o.Examples[string(model.SandboxFailed)]; ok && ex.Hint != "" {
		hint = ex.Hint
	}
	return Band{Version: v, Outcome: string(model.SandboxFailed), Hint: hint, Trials: o.Trials}, true
}

func cellOf(c schema.Cell, ok bool, bandOutcome string) Cell {
	if !ok {
		return Cell{Band: bandOutcome}
	}
	x := Cell{Has: true, Trials: c.Trials, Measured: c.Measured, Failures: c.Failures, Rate: c.FailureRate, CI: c.CI95, Outcomes: c.Outcomes,
		FailOpen: c.FailOpen > 0, Known: c.Failures > 0 && c.KnownFailures() == c.Failures, Band: bandOutcome}
	x.Outcome = dominant(c.Outcomes)
	x.Failing = dominant(c.FailingOutcomes)
	x.Pure = x.Outcome != "" && c.Outcomes[x.Outcome] == c.Trials && c.Trials > 0
	return x
}

// dominant is the most frequent outcome of counts; a tie goes to the more severe one.
func dominant(counts map[string]int) string {
	best, out := 0, ""
	for _, o := range model.All {
		n := counts[string(o)]
		if n > best || n == best && n > 0 && model.Worst(o, model.Outcome(out)) == o {
			out, best = string(o), n
		}
	}
	return out
}

// steady reports whether a row passed in every version it ran in, bands aside (a version that
// did not start says nothing about the scenario; the band says it once for all of them).
func steady(r Row) bool {
	for _, c := range r.Cells {
		if c.Has && c.Band == "" && c.Failures > 0 {
			return false
		}
	}
	return true
}

// diff marks each cell's change against the previous version the scenario ran in and returns
// them. Band versions are skipped: the versions either side of a band are compared directly.
func diff(r *Row, vs []string, alpha float64) []Change {
	var out []Change
	prev := -1
	seen := map[string]bool{} // failing outcomes shown by older versions
	for i := range r.Cells {
		c := &r.Cells[i]
		if !c.Has || c.Band != "" {
			continue
		}
		if prev >= 0 {
			if ch, ok := compare(r.Scenario, vs[prev], vs[i], r.Cells[prev], *c, alpha); ok {
				ch.FirstSeen = ch.Kind == KindWorse && !seen[c.Outcome] && c.Outcome != string(model.Correct)
				c.Change = &ch
				out = append(out, ch)
			}
		}
		if c.Failures > 0 {
			seen[c.Outcome] = true
		}
		prev = i
	}
	return out
}

func compare(scenario, from, to string, a, b Cell, alpha float64) (Change, bool) {
	ch := Change{Scenario: scenario, From: from, To: to, Before: summary(a), After: summary(b), P: 1}
	up, _ := stats.FisherRose(a.Failures, a.Measured, b.Failures, b.Measured)
	down, _ := stats.FisherRose(b.Failures, b.Measured, a.Failures, a.Measured)
	switch {
	case b.Rate > a.Rate && (up < alpha || a.Pure && b.Pure && a.Outcome != b.Outcome):
		ch.Kind, ch.P = KindWorse, up
	case b.Rate < a.Rate && (down < alpha || a.Pure && b.Pure && a.Outcome != b.Outcome):
		ch.Kind, ch.P = KindBetter, down
	case a.Pure && b.Pure && a.Outcome != b.Outcome:
		ch.Kind = KindOutcome
	default:
		return Change{}, false
	}
	ch.Significant = ch.P < alpha
	return ch, true
}

// summary is "correct 4/4" for a cell with one outcome, else "residue 3, correct 1 of 4"; an
// outcome other than correct that the scenario expects (a fail-closed scenario's sandbox-failed,
// default-deny's allowed-blocked) says so: "allowed-blocked 4/4 (passes)".
func summary(c Cell) string {
	s := ""
	if c.Pure {
		s = fmt.Sprintf("%s %d/%d", c.Outcome, c.Trials, c.Trials)
	} else {
		var parts []string
		for _, o := range model.All {
			if n := c.Outcomes[string(o)]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", o, n))
			}
		}
		s = fmt.Sprintf("%s of %d", strings.Join(parts, ", "), c.Trials)
	}
	if c.Measured > 0 && c.Failures == 0 && c.Outcome != string(model.Correct) {
		s += " (passes)"
	}
	return s
}

// Span is a run of adjacent versions (indexes into Table.Versions, inclusive) whose cells are
// alike in every row: the same counts of every outcome and no change between them. A writer may
// print a span as one column ("0.0.20 … 0.0.65"): nothing is lost, since every version in it
// would print the same.
type Span struct{ From, To int }

// Label is "0.0.60", or "0.0.20 … 0.0.65 (12)" for a span of several versions.
func (s Span) Label(vs []string) string {
	if s.From == s.To {
		return vs[s.From]
	}
	return fmt.Sprintf("%s … %s (%d)", vs[s.From], vs[s.To], s.To-s.From+1)
}

// Spans groups the table's versions into runs of alike columns, oldest first.
func (t Table) Spans() []Span {
	var out []Span
	for i := range t.Versions {
		if n := len(out); n > 0 && t.alike(out[n-1].To, i) {
			out[n-1].To = i
			continue
		}
		out = append(out, Span{From: i, To: i})
	}
	return out
}

func (t Table) alike(i, j int) bool {
	for _, r := range t.Rows {
		a, b := r.Cells[i], r.Cells[j]
		if a.Has != b.Has || a.Band != b.Band || b.Change != nil || a.Trials != b.Trials || len(a.Outcomes) != len(b.Outcomes) {
			return false
		}
		for o, n := range a.Outcomes {
			if b.Outcomes[o] != n {
				return false
			}
		}
	}
	return true
}
