package compare

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// sweep is srt at four versions on one host: a residue appears in 0.0.20 and stays; a fail-open
// appears in 0.0.22. codex at one version rides along.
func sweep(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	add := func(target, v string, ws, net model.Outcome) {
		cell := model.Cell{ID: target + v, Target: target, Version: v, Host: "local"}
		for i := range 5 {
			a.Add(model.Record{Cell: cell, Trial: i, Outcome: model.Worst(ws, net), Scenarios: []model.Scenario{
				{Name: "filesystem/workspace/clean", Outcome: ws, Pass: ws == model.Correct},
				{Name: "network/seed", Outcome: net, Pass: net == model.Correct, Breaches: []model.Breach{{Outcome: net, What: "http: denied.sandcheck.test reached"}}},
			}})
		}
	}
	ok := model.Correct
	add("srt", "0.0.9", ok, ok)
	add("srt", "0.0.20", model.Residue, ok)
	add("srt", "0.0.21", model.Residue, ok)
	add("srt", "0.0.22", model.Residue, model.NonEnforcing)
	add("codex", "0.171.0", ok, ok)
	return a.Report()
}

func TestCompareTwoVersionsOfOneReport(t *testing.T) {
	rep := sweep(t)
	res, err := Versions(rep, "srt", "0.0.9", "0.0.22", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Compared != 2 || len(res.Regressions) != 2 || !res.Failed() {
		t.Fatalf("result %+v", res)
	}
	first := map[string]string{}
	for _, r := range res.Regressions {
		first[r.Scenario] = r.FirstIn
	}
	if first["filesystem/workspace/clean"] != "0.0.20" || first["network/seed"] != "0.0.22" {
		t.Fatalf("first versions %v, want the residue from 0.0.20 and the fail-open from 0.0.22", first)
	}
	var b strings.Builder
	WriteText(&b, res)
	for _, want := range []string{
		"srt 0.0.9 (baseline) vs 0.0.22: compared 2 cell x scenario rows",
		"REGRESSION srt 0.0.22@local filesystem/workspace/clean: failures 0/5 (0.0%) -> 5/5 (100.0%), p=0.003968; first seen in 0.0.20",
		"NEW FAIL-OPEN OUTCOME srt 0.0.22@local network/seed: non-enforcing x5 (fail-open), never seen in the baseline: http: denied.sandcheck.test reached (5); first seen in 0.0.22",
		"FAIL",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// Defaults: oldest and newest; a version between them is no regression against 0.0.20.
	res, err = Versions(rep, "srt", "0.0.20", "", 0)
	if err != nil || res.To != "0.0.22" || len(res.Regressions) != 1 || res.Regressions[0].Scenario != "network/seed" {
		t.Fatalf("0.0.20 vs newest: %+v %v", res, err)
	}
}

func TestCompareVersionsErrors(t *testing.T) {
	rep := sweep(t)
	for _, c := range []struct{ target, from, to, want string }{
		{"", "", "", "holds versions of codex, srt; say which target"},
		{"srt", "0.0.10", "", "srt 0.0.10 is not in the report (versions: 0.0.9, 0.0.20, 0.0.21, 0.0.22)"},
		{"srt", "0.0.20", "0.0.20", "both sides are srt 0.0.20"},
		{"codex", "", "", "both sides are codex 0.171.0"},
		{"bwrap", "", "", "no versions of bwrap"},
	} {
		if _, err := Versions(rep, c.target, c.from, c.to, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Versions(%q, %q, %q): %v, want %q", c.target, c.from, c.to, err, c.want)
		}
	}
}

func TestCompareIntoABandNamesItsFirstVersion(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	for _, v := range []string{"0.0.64", "0.0.66", "0.0.68"} {
		o := model.Correct
		if v != "0.0.64" {
			o = model.SandboxFailed
		}
		cell := model.Cell{ID: v, Target: "srt", Version: v, Host: "local"}
		for i := range 4 {
			a.Add(model.Record{Cell: cell, Trial: i, Outcome: o, Scenarios: []model.Scenario{{Name: "network/seed", Outcome: o, Pass: o == model.Correct}}})
		}
	}
	res, err := Versions(a.Report(), "srt", "0.0.64", "0.0.68", 0)
	if err != nil || len(res.Regressions) != 1 || res.Regressions[0].FirstIn != "0.0.66" {
		t.Fatalf("%+v %v", res, err)
	}
}
