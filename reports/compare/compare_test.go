package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// journalOf writes a crafted journal: for each cell, n trials of which the listed trial indexes
// have the given outcome (scenario fails); the rest are correct.
type spec struct {
	cell     string
	scenario string
	n        int
	bad      map[int]model.Outcome
}

func reportOf(t *testing.T, dir, name string, specs ...spec) string {
	t.Helper()
	jpath := filepath.Join(dir, name+".jsonl")
	w, err := journal.OpenWriter(jpath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		for i := 0; i < s.n; i++ {
			o := model.Correct
			if b, ok := s.bad[i]; ok {
				o = b
			}
			w.Append(model.Record{RunID: name, Cell: model.Cell{ID: s.cell, Target: "srt", Host: s.cell}, Trial: i, Outcome: o,
				Scenarios: []model.Scenario{{Name: s.scenario, Outcome: o, Pass: o == model.Correct}}})
		}
	}
	w.Close()
	rep, _, err := aggregate.FromJournals([]string{jpath}, aggregate.Options{Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if err := format.WriteAll(out, rep, format.Options{}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, format.JSONFile)
}

func bad(o model.Outcome, idx ...int) map[int]model.Outcome {
	m := map[int]model.Outcome{}
	for _, i := range idx {
		m[i] = o
	}
	return m
}

func TestCompareFromJournals(t *testing.T) {
	dir := t.TempDir()
	base := reportOf(t, dir, "base",
		spec{"wsl", "network/seed", 100, bad(model.ProxyDead, 1)},        // 1%
		spec{"native", "network/seed", 100, nil},                         // 0%
		spec{"mac", "network/seed", 50, bad(model.AllowedBlocked, 3, 4)}, // 4%
		spec{"gone", "network/seed", 10, nil},                            // disappears
	)
	cur := reportOf(t, dir, "new",
		spec{"wsl", "network/seed", 100, bad(model.ProxyDead, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)}, // 10%: regression
		spec{"native", "network/seed", 100, bad(model.NonEnforcing, 7)},                       // 1 fail-open: not significant, but new fail-open kind
		spec{"mac", "network/seed", 50, bad(model.AllowedBlocked, 3, 4, 5)},                   // 6%: not significant
		spec{"added", "network/seed", 10, nil},
	)
	res, err := Files(base, cur, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Regressions) != 1 || res.Regressions[0].CellID != "wsl" || res.Regressions[0].NewFailures != 10 {
		t.Fatalf("regressions = %+v", res.Regressions)
	}
	// Known answer: P(X >= 10 | 11 failures in 200, 100 drawn) for 1/100 -> 10/100.
	if p := res.Regressions[0].P; p > 0.01 || p < 0.001 {
		t.Fatalf("p = %v, want ~0.005", p)
	}
	if len(res.NewOutcomes) != 1 || res.NewOutcomes[0].Outcome != "non-enforcing" || res.NewOutcomes[0].Severity != "fail-open" {
		t.Fatalf("new outcomes = %+v", res.NewOutcomes)
	}
	if len(res.FailOpen) != 1 || res.FailOpen[0].Name != "srt@native" || res.FailOpen[0].Trials != 1 {
		t.Fatalf("fail-open outside the known findings = %+v", res.FailOpen)
	}
	if fmt.Sprint(res.Disappeared) != "[srt@gone network/seed]" || fmt.Sprint(res.Added) != "[srt@added network/seed]" || res.Compared != 3 {
		t.Fatalf("disappeared %v added %v compared %d", res.Disappeared, res.Added, res.Compared)
	}
	if !res.Failed() {
		t.Fatal("a significant regression must fail")
	}
	var buf bytes.Buffer
	WriteText(&buf, res)
	for _, want := range []string{"REGRESSION srt@wsl network/seed: failures 1/100 (1.0%) -> 10/100 (10.0%)", "NEW FAIL-OPEN OUTCOME srt@native", "disappeared srt@gone", "new cell srt@added", "FAIL\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestCompareQuietWhenUnchanged(t *testing.T) {
	dir := t.TempDir()
	a := reportOf(t, dir, "a", spec{"wsl", "s", 100, bad(model.ProxyDead, 1, 2, 3)})
	b := reportOf(t, dir, "b", spec{"wsl", "s", 100, bad(model.ProxyDead, 4, 5, 6, 7)})
	res, err := Files(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || len(res.Regressions) != 0 || len(res.NewOutcomes) != 0 || res.Alpha != DefaultAlpha {
		t.Fatalf("3%% -> 4%% is noise: %+v", res)
	}
	var buf bytes.Buffer
	WriteText(&buf, res)
	if !strings.HasSuffix(buf.String(), "OK\n") {
		t.Fatalf("text = %q", buf.String())
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	good := reportOf(t, dir, "a", spec{"wsl", "s", 1, nil})
	newer := filepath.Join(dir, "newer.json")
	b, _ := json.Marshal(map[string]any{"schema_version": schema.Version + 1})
	os.WriteFile(newer, b, 0o644)
	if _, err := Files(good, newer, 0.05); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Files(good, filepath.Join(dir, "missing.json"), 0.05); err == nil {
		t.Fatal("missing file must fail")
	}
	if _, err := Compare(&schema.Report{}, &schema.Report{}, 1.5); err == nil {
		t.Fatal("alpha >= 1 must fail")
	}
}

// TestCompareNewEgressOutsideScenarios: a trial that timed out after reaching a denied host has
// no scenario row; compare still reports it as a new fail-open, saying what was reached.
func TestCompareNewEgressOutsideScenarios(t *testing.T) {
	dir := t.TempDir()
	base := reportOf(t, dir, "base", spec{"native", "network/seed", 50, nil})
	jpath := filepath.Join(dir, "new.jsonl")
	w, err := journal.OpenWriter(jpath)
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "native", Target: "srt", Host: "native"}
	for i := 0; i < 50; i++ {
		w.Append(model.Record{RunID: "new", Cell: cell, Trial: i, Outcome: model.Correct,
			Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}}})
	}
	w.Append(model.Record{RunID: "new", Cell: cell, Trial: 50, Outcome: model.Timeout, TimedOut: true,
		Egress: []string{"denied https CONNECT denied.sandcheck.test:443 from 198.18.0.2"}})
	w.Close()
	rep, _, err := aggregate.FromJournals([]string{jpath}, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := format.WriteAll(filepath.Join(dir, "new"), rep, format.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Files(base, filepath.Join(dir, "new", format.JSONFile), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteText(&buf, res)
	want := "FAIL-OPEN srt@native: 1 trial(s) fail open outside the known findings: denied https CONNECT denied.sandcheck.test:443 from 198.18.0.2 (1)"
	if !res.Failed() || !strings.Contains(buf.String(), want) {
		t.Fatalf("compare must fail naming the egress:\n%s", buf.String())
	}
}
