package versiontable

import (
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// trials adds n trials of srt at version v on host with the given scenario outcomes.
func trials(a *aggregate.Aggregator, host, v string, n int, outcome model.Outcome, scen map[string]model.Outcome) {
	cell := model.Cell{ID: "srt-" + v + "-" + host, Target: "srt", Version: v, Host: host}
	for i := range n {
		rec := model.Record{RunID: "r", Cell: cell, Trial: i, Outcome: outcome}
		if outcome == model.NotApplicable { // as an undrivable build's trial says it
			rec.Hint = "srt 0.0.8 is older than the first release the adapter knows"
		}
		for name, o := range scen {
			sc := model.Scenario{Name: name, Outcome: o, Pass: o == model.Correct || o == model.NotApplicable}
			if o == model.SandboxFailed {
				sc.Hint = "apply-seccomp: write /proc/self/uid_map: Operation not permitted"
			}
			if o == model.NotApplicable {
				sc.Hint = "srt 0.0.8 is older than the first release the adapter knows"
			}
			rec.Scenarios = append(rec.Scenarios, sc)
		}
		a.Add(rec)
	}
}

func history(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok, res, sf := model.Correct, model.Residue, model.SandboxFailed
	na := map[string]model.Outcome{model.ScenarioDrivable: model.NotApplicable}
	trials(a, "local", "0.0.8", 4, model.NotApplicable, na)
	trials(a, "local", "0.0.9", 4, ok, map[string]model.Outcome{"a/run": ok, "b/workspace": ok, "d/old-only": ok})
	trials(a, "local", "0.0.10", 4, ok, map[string]model.Outcome{"a/run": ok, "b/workspace": ok, "d/old-only": ok})
	trials(a, "local", "0.0.20", 4, res, map[string]model.Outcome{"a/run": ok, "b/workspace": res})
	trials(a, "local", "0.0.21", 4, sf, map[string]model.Outcome{"a/run": sf, "b/workspace": sf})
	trials(a, "local", "0.0.22", 4, ok, map[string]model.Outcome{"a/run": ok, "b/workspace": ok})
	// Another host at one version only, and the pinned install: no tables of their own.
	trials(a, "box", "0.0.22", 2, ok, map[string]model.Outcome{"a/run": ok})
	trials(a, "local", "", 2, ok, map[string]model.Outcome{"a/run": ok})
	return a.Report()
}

func TestTableOrdersVersionsAndFindsChanges(t *testing.T) {
	tables := Build(history(t), 0)
	if len(tables) != 1 {
		t.Fatalf("%d tables, want one (local; box has one version, the pinned cell none)", len(tables))
	}
	tb := tables[0]
	if tb.Series.Host != "local" || tb.Series.CellID != "" || tb.Series.Version != "" {
		t.Fatalf("series %+v", tb.Series)
	}
	if !slices.Equal(tb.Versions, []string{"0.0.8", "0.0.9", "0.0.10", "0.0.20", "0.0.21", "0.0.22"}) {
		t.Fatalf("versions %v: want release order (0.0.9 before 0.0.10)", tb.Versions)
	}
	if len(tb.Bands) != 2 || tb.Bands[0].Version != "0.0.8" || tb.Bands[0].Outcome != "not-applicable" ||
		!strings.Contains(tb.Bands[0].Hint, "older than the first release") ||
		tb.Bands[1].Version != "0.0.21" || tb.Bands[1].Outcome != "sandbox-failed" || !strings.Contains(tb.Bands[1].Hint, "apply-seccomp") {
		t.Fatalf("bands %+v", tb.Bands)
	}
	// a/run failed only in the band version: steady, said once by the band.
	if !slices.Equal(tb.Steady, []string{"a/run", "d/old-only"}) {
		t.Fatalf("steady %v", tb.Steady)
	}
	var got []string
	for _, c := range tb.Changes {
		got = append(got, c.String())
	}
	// The band version is skipped: 0.0.20 is compared with 0.0.22 directly.
	want := []string{
		"b/workspace: 0.0.10 → 0.0.20 worse: correct 4/4 → residue 4/4 (p=0.014, first seen in 0.0.20)",
		"b/workspace: 0.0.20 → 0.0.22 better: residue 4/4 → correct 4/4 (p=0.014)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Cells carry the change they start, the band, and the interval.
	var b Row
	for _, r := range tb.Rows {
		if r.Scenario == "b/workspace" {
			b = r
		}
	}
	if c := b.Cells[3]; c.Change == nil || c.Change.Kind != KindWorse || c.Rate != 1 || c.CI[0] < 0.4 || c.CI[1] != 1 {
		t.Fatalf("b at 0.0.20: %+v", c)
	}
	if c := b.Cells[0]; c.Has || c.Band != "not-applicable" {
		t.Fatalf("b at 0.0.8 (not driven): %+v", c)
	}
}

func TestFlakyDifferencesNeedSignificance(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	ok, pd := model.Correct, model.ProxyDead
	// 1 failure in 10, then 2 in 10: noise, not a change.
	for i, v := range []string{"1.0.0", "1.1.0"} {
		cell := model.Cell{ID: v, Target: "srt", Version: v, Host: "h"}
		for k := range 10 {
			o := ok
			if k <= i {
				o = pd
			}
			a.Add(model.Record{Cell: cell, Trial: k, Outcome: o, Scenarios: []model.Scenario{{Name: "n/seed", Outcome: o, Pass: o == ok}}})
		}
	}
	tables := Build(a.Report(), 0.05)
	if len(tables) != 1 || len(tables[0].Changes) != 0 || len(tables[0].Rows) != 1 {
		t.Fatalf("a 10%% → 20%% difference flagged: %+v", tables)
	}
}

func TestSpansJoinAlikeVersionsOnly(t *testing.T) {
	tb := Build(history(t), 0)[0]
	var got []string
	for _, s := range tb.Spans() {
		got = append(got, s.Label(tb.Versions))
	}
	// 0.0.9 and 0.0.10 print alike; every other column differs from its neighbour.
	want := []string{"0.0.8", "0.0.9 … 0.0.10 (2)", "0.0.20", "0.0.21", "0.0.22"}
	if !slices.Equal(got, want) {
		t.Fatalf("spans %q, want %q", got, want)
	}
}

func TestExpectedOutcomesReadAsPasses(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	// untrusted/fresh-home passes on allowed-blocked (default deny): proxy-dead -> allowed-blocked is a fix.
	for i, o := range []model.Outcome{model.ProxyDead, model.AllowedBlocked} {
		v := []string{"0.0.28", "0.0.32"}[i]
		for k := range 4 {
			a.Add(model.Record{Cell: model.Cell{ID: v, Target: "srt", Version: v, Host: "h"}, Trial: k, Outcome: o,
				Scenarios: []model.Scenario{{Name: "untrusted/fresh-home", Outcome: o, Pass: o == model.AllowedBlocked}}})
		}
	}
	ch := Build(a.Report(), 0)[0].Changes
	if len(ch) != 1 || ch[0].String() != "untrusted/fresh-home: 0.0.28 → 0.0.32 better: proxy-dead 4/4 → allowed-blocked 4/4 (passes) (p=0.014)" {
		t.Fatalf("changes %v", ch)
	}
}

func TestMixedCellNamesWhatFailed(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	for i, v := range []string{"1.0.0", "1.1.0"} {
		cell := model.Cell{ID: v, Target: "srt", Version: v, Host: "h"}
		for k := range 3 {
			o := model.Correct
			if i == 1 && k == 0 {
				o = model.ProxyDead // one of three: correct is still the most frequent outcome
			}
			a.Add(model.Record{Cell: cell, Trial: k, Outcome: o, Scenarios: []model.Scenario{{Name: "u/home", Outcome: o, Pass: o == model.Correct}}})
		}
	}
	c := Build(a.Report(), 0)[0].Rows[0].Cells[1]
	if c.Outcome != "correct" || c.Failing != "proxy-dead" || c.Pure {
		t.Fatalf("cell %+v", c)
	}
}

func TestAnotherPassingOutcomeIsAChangeOfKind(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	// untrusted/settings-empty: default deny (allowed-blocked) in 0.0.52, refused loudly in 0.0.56; both pass.
	for i, o := range []model.Outcome{model.AllowedBlocked, model.SandboxFailed} {
		v := []string{"0.0.52", "0.0.56"}[i]
		for k := range 4 {
			a.Add(model.Record{Cell: model.Cell{ID: v, Target: "srt", Version: v, Host: "h"}, Trial: k, Outcome: o,
				Scenarios: []model.Scenario{{Name: "untrusted/settings-empty", Outcome: o, Pass: true}}})
		}
	}
	tb := Build(a.Report(), 0)[0]
	want := "untrusted/settings-empty: 0.0.52 → 0.0.56 outcome: allowed-blocked 4/4 (passes) → sandbox-failed 4/4 (passes) (the same failure rate, another outcome in every trial)"
	if len(tb.Changes) != 1 || tb.Changes[0].String() != want || tb.Changes[0].Significant {
		t.Fatalf("changes %v", tb.Changes)
	}
}
