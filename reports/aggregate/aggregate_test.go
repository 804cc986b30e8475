package aggregate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

var (
	wsl   = model.Cell{ID: "c-wsl", Target: "srt", Host: "wsl2"}
	clean = model.Cell{ID: "c-local", Target: "srt", Host: "local"}
)

func sc(name string, o model.Outcome, pass bool) model.Scenario {
	return model.Scenario{Name: name, Outcome: o, Pass: pass, Hint: name + ":" + string(o)}
}

// trials builds the WSL cell of the seed bug: mostly correct, a dead proxy that fails every
// network scenario at once, one non-enforcing trial, one trial that never got to a scenario.
func trials() []model.Record {
	var out []model.Record
	add := func(trial int, o model.Outcome, scens ...model.Scenario) {
		out = append(out, model.Record{V: 1, RunID: "run1", Cell: wsl, Trial: trial, Outcome: o, Hint: "trial hint",
			Scenarios: scens, Evidence: json.RawMessage(fmt.Sprintf(`{"trial":%d}`, trial))})
	}
	for i := 0; i < 6; i++ {
		add(i, model.Correct, sc("network/seed", model.Correct, true), sc("network/ipv6", model.Correct, true), sc("network/dns", model.Correct, true))
	}
	// Trial 7 arrives before 6: the example must still be trial 6.
	for _, i := range []int{7, 6} {
		add(i, model.ProxyDead, sc("network/seed", model.ProxyDead, false), sc("network/ipv6", model.ProxyDead, false), sc("network/dns", model.ProxyDead, false))
	}
	add(8, model.NonEnforcing, sc("network/seed", model.NonEnforcing, false), sc("network/ipv6", model.Correct, true), sc("network/dns", model.Correct, true))
	add(9, model.HarnessError)
	out[0].HostFP = json.RawMessage(`{"kernel":"6.6.87.2-microsoft-standard-WSL2"}`)
	for i := 0; i < 5; i++ {
		out = append(out, model.Record{V: 1, RunID: "run2", Cell: clean, Trial: i, Outcome: model.Correct,
			Scenarios: []model.Scenario{sc("network/seed", model.Correct, true)}})
	}
	return out
}

func build(t *testing.T, opts Options) *schema.Report {
	t.Helper()
	opts.Now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range trials() {
		a.Add(r)
	}
	return a.Report()
}

func find(t *testing.T, rep *schema.Report, host, scenario string) schema.Cell {
	t.Helper()
	for _, c := range rep.Cells {
		if c.Host == host && c.Scenario == scenario {
			return c
		}
	}
	t.Fatalf("no row %s %s", host, scenario)
	return schema.Cell{}
}

func TestRowsCountOutcomesAndIntervals(t *testing.T) {
	rep := build(t, Options{SandcheckVersion: "v0.1.0", Until: "rate<=0.01 vs rate>=0.05"})
	if len(rep.Cells) != 4 || len(rep.Overall) != 2 {
		t.Fatalf("rows = %d cells, %d overall", len(rep.Cells), len(rep.Overall))
	}
	// Sorted by target, host, then scenario.
	if rep.Cells[0].Host != "local" || rep.Cells[1].Scenario != "network/dns" {
		t.Fatalf("order: %s %s, %s %s", rep.Cells[0].Host, rep.Cells[0].Scenario, rep.Cells[1].Host, rep.Cells[1].Scenario)
	}
	seed := find(t, rep, "wsl2", "network/seed")
	if seed.Trials != 9 || seed.Measured != 9 || seed.Failures != 3 || seed.FailOpen != 1 || seed.FailClosed.Count != 2 {
		t.Fatalf("seed counts = %+v", seed.Counts)
	}
	if !reflect.DeepEqual(seed.Outcomes, map[string]int{"correct": 6, "proxy-dead": 2, "non-enforcing": 1}) {
		t.Fatalf("outcomes = %v", seed.Outcomes)
	}
	if !reflect.DeepEqual(seed.FailingOutcomes, map[string]int{"proxy-dead": 2, "non-enforcing": 1}) {
		t.Fatalf("failing outcomes = %v", seed.FailingOutcomes)
	}
	w := stats.Wilson(3, 9)
	if math.Abs(seed.FailureRate-1.0/3) > 1e-12 || seed.CI95 != [2]float64{w.Low, w.High} {
		t.Fatalf("rate %v ci %v", seed.FailureRate, seed.CI95)
	}
	if seed.RuleOfThree != nil || seed.TrialsNeeded != nil {
		t.Fatal("rule of three only applies at zero failures")
	}
	if seed.SPRT == nil || seed.SPRT.Decision != "accept-h1" {
		t.Fatalf("sprt = %+v", seed.SPRT)
	}
	// One example per outcome, the lowest trial, with the scenario's hint and the trial's evidence.
	ex := seed.Examples["proxy-dead"]
	if ex.Trial != 6 || ex.Hint != "network/seed:proxy-dead" || string(rep.ExampleEvidence(ex)) != `{"trial":6}` || ex.Pass || ex.Evidence != nil {
		t.Fatalf("example = %+v", ex)
	}
	if len(seed.Examples) != 3 {
		t.Fatalf("examples = %v", seed.Examples)
	}

	local := find(t, rep, "local", "network/seed")
	if local.Failures != 0 || local.RuleOfThree == nil || *local.RuleOfThree != 0.6 {
		t.Fatalf("local = %+v", local.Counts)
	}
	if local.TrialsNeeded == nil || local.TrialsNeeded.Trials != 299 || local.TrialsNeeded.More != 294 {
		t.Fatalf("trials needed = %+v", local.TrialsNeeded)
	}
	if local.SPRT.Decision != "continue" {
		t.Fatalf("5 clean trials cannot decide yet: %+v", local.SPRT)
	}

	// Overall: the harness-error trial counts as a trial but not as a measurement.
	var ov schema.Overall
	for _, o := range rep.Overall {
		if o.Host == "wsl2" {
			ov = o
		}
	}
	if ov.Trials != 10 || ov.Measured != 9 || ov.Failures != 3 || ov.Outcomes["harness-error"] != 1 || ov.FailOpen != 1 {
		t.Fatalf("overall = %+v", ov.Counts)
	}
	if ov.Examples["harness-error"].Hint != "trial hint" {
		t.Fatalf("overall example = %+v", ov.Examples["harness-error"])
	}

	if string(rep.Hosts["wsl2"]) != `{"kernel":"6.6.87.2-microsoft-standard-WSL2"}` || len(rep.Hosts) != 1 {
		t.Fatalf("hosts = %v", rep.Hosts)
	}
	if !reflect.DeepEqual(rep.RunIDs, []string{"run1", "run2"}) || rep.SchemaVersion != schema.Version || rep.Until.Hypotheses != "rate<=0.01 vs rate>=0.05" {
		t.Fatalf("header = %v %d %+v", rep.RunIDs, rep.SchemaVersion, rep.Until)
	}
}

func TestCoFailureGroupsOneCause(t *testing.T) {
	rep := build(t, Options{})
	if len(rep.CoFailures) != 1 || rep.CoFailures[0].Host != "wsl2" {
		t.Fatalf("co-failures = %+v", rep.CoFailures)
	}
	cf := rep.CoFailures[0]
	// dns and ipv6 failed in exactly trials 6 and 7; seed also failed alone in trial 8.
	want := []schema.Group{{Scenarios: []string{"network/dns", "network/ipv6"}, Failures: 2}}
	if !reflect.DeepEqual(cf.Groups, want) || cf.Trials != 10 {
		t.Fatalf("groups = %+v", cf.Groups)
	}
}

func TestBadUntil(t *testing.T) {
	if _, err := New(Options{Until: "rate<=0.5 vs rate>=0.1"}); err == nil || !strings.Contains(err.Error(), "P0 < P1") {
		t.Fatalf("err = %v", err)
	}
}

func TestEvidenceIsCapped(t *testing.T) {
	a, _ := New(Options{MaxEvidenceBytes: 100})
	big, _ := json.Marshal(map[string]string{"stderr": strings.Repeat("x", 1000)})
	a.Add(model.Record{Cell: clean, Outcome: model.ProxyDead, Evidence: big})
	rep := a.Report()
	ev := rep.ExampleEvidence(rep.Overall[0].Examples["proxy-dead"])
	var v struct {
		Truncated     bool
		OriginalBytes int `json:"original_bytes"`
		Head          string
	}
	if err := json.Unmarshal(ev, &v); err != nil || !v.Truncated || v.OriginalBytes != len(big) || len(v.Head) != 100 {
		t.Fatalf("capped evidence = %s (%v)", ev, err)
	}
}

// A report keeps the evidence of failures, once per trial however many rows it fails, and none
// of passing trials: its size follows the failures, not the trials.
func TestEvidenceOncePerFailingTrial(t *testing.T) {
	a, _ := New(Options{})
	for i := range 1000 {
		r := model.Record{RunID: "r", Cell: clean, Trial: i, Outcome: model.Correct,
			Evidence:  json.RawMessage(fmt.Sprintf(`{"trial":%d,"pad":"%s"}`, i, strings.Repeat("p", 1000))),
			Scenarios: []model.Scenario{{Name: "a", Outcome: model.Correct, Pass: true}, {Name: "b", Outcome: model.Correct, Pass: true}}}
		if i == 7 || i == 9 { // trial 7 fails both scenarios, trial 9 one of them
			r.Outcome = model.ProxyDead
			r.Scenarios[1] = model.Scenario{Name: "b", Outcome: model.ProxyDead}
			if i == 7 {
				r.Scenarios[0] = model.Scenario{Name: "a", Outcome: model.ProxyDead}
			}
		}
		a.Add(r)
	}
	rep := a.Report()
	if len(rep.Evidence) != 1 {
		t.Fatalf("report keeps %d evidence blobs, want 1 (trial 7's)", len(rep.Evidence))
	}
	for _, rows := range [][]schema.Counts{{rep.Overall[0].Counts}, {rep.Cells[0].Counts, rep.Cells[1].Counts}} {
		for _, c := range rows {
			if ex := c.Examples["correct"]; !ex.Pass || ex.EvidenceRef != "" || rep.ExampleEvidence(ex) != nil {
				t.Fatalf("passing example keeps evidence: %+v", ex)
			}
			ex := c.Examples["proxy-dead"]
			if ev := rep.ExampleEvidence(ex); ex.Trial != 7 || !strings.Contains(string(ev), `"trial":7`) {
				t.Fatalf("failing example: %+v, evidence %.40s", ex, ev)
			}
		}
	}
	var buf bytes.Buffer
	schema.Encode(&buf, rep)
	if buf.Len() > 20<<10 {
		t.Fatalf("report.json of 1000 trials with 1 KB of evidence each is %d bytes", buf.Len())
	}
}

// Memory must not grow with the number of trials: 100x more records, each with its own evidence,
// may cost no more than a little slack.
func TestStreamingMemoryIsFlat(t *testing.T) {
	heapAfter := func(n int) uint64 {
		a, _ := New(Options{})
		for i := 0; i < n; i++ {
			o := model.Correct
			if i%7 == 0 {
				o = model.ProxyDead
			}
			ev := json.RawMessage(fmt.Sprintf(`{"blob":%q}`, strings.Repeat("e", 1024)+fmt.Sprint(i)))
			a.Add(model.Record{RunID: "r", Cell: clean, Trial: i, Outcome: o, Evidence: ev,
				Scenarios: []model.Scenario{{Name: "s", Outcome: o, Pass: o == model.Correct}}})
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		runtime.KeepAlive(a)
		return m.HeapAlloc
	}
	small := heapAfter(1000)
	large := heapAfter(100000) // ~100 MB of evidence passed through
	if large > small+4<<20 {
		t.Fatalf("heap grew from %d to %d bytes with 100x the trials", small, large)
	}
}

// TestTrialLevelEgressKnownAndBreaches: egress the fixture servers saw counts as fail-open at
// trial level (a timeout with egress is not harness trouble), breaches are counted per trial and
// bounded, known findings are keyed by their whole id set, unreproduced ids per id.
func TestTrialLevelEgressKnownAndBreaches(t *testing.T) {
	a, _ := New(Options{})
	rec := func(i int, r model.Record) model.Record { r.V, r.Cell, r.Trial = 1, clean, i; return r }
	i := 0
	for ; i < 10; i++ { // correct; the udp finding keyed to network/seed did not show
		a.Add(rec(i, model.Record{Outcome: model.Correct, Scenarios: []model.Scenario{
			{Name: "network/seed", Outcome: model.Correct, Pass: true, Unreproduced: "srt:b, srt:a"}}}))
	}
	a.Add(rec(i, model.Record{Outcome: model.Timeout, TimedOut: true})) // no egress: harness
	i++
	a.Add(rec(i, model.Record{Outcome: model.Timeout, TimedOut: true, Egress: []string{"denied tcp 198.18.0.3:9 from 198.18.0.2"}}))
	i++
	a.Add(rec(i, model.Record{Outcome: model.NonEnforcing, Egress: []string{"dns denied.sandcheck.test"}}))
	i++
	// A known failure whose breach repeats in the trial: counted once.
	a.Add(rec(i, model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
		{Name: "network/seed", Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "udp: x", Known: "srt:b, srt:a"}, {Outcome: model.NonEnforcing, What: "udp: x", Known: "srt:b, srt:a"}}}}}))
	i++
	// Many distinct breaches: the report keeps MaxBreaches and counts the rest.
	for k := 0; k < 20; k++ {
		a.Add(rec(i, model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
			{Name: "network/seed", Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: fmt.Sprintf("write /tmp/f%02d", k)}}}}}))
		i++
	}
	rep := a.Report()
	o, c := rep.Overall[0], rep.Cells[0]
	every := model.Accept{Every: true}
	if o.Trials != 34 || o.FailOpenTrials(every) != 22 || o.TimedOutFailOpen(every) != 1 || o.FailOpen != 23 || o.Measured != 33 || o.Harness != 1 {
		t.Fatalf("overall: trials %d fail-open outside the known %d (timed out %d) fail_open %d measured %d harness %d",
			o.Trials, o.FailOpenTrials(every), o.TimedOutFailOpen(every), o.FailOpen, o.Measured, o.Harness)
	}
	if n := o.FailOpenTrials(model.AcceptIDs("srt:a", "srt:b")); n != 22 {
		t.Fatalf("accepting the known finding's ids: %d fail-open trials, want the 22 others", n)
	}
	if n := o.FailOpenTrials(model.Accept{}); n != 23 {
		t.Fatalf("accepting nothing: %d fail-open trials, want 23", n)
	}
	if got := o.BreachList(); got != "denied tcp 198.18.0.3:9 from 198.18.0.2 (1), dns denied.sandcheck.test (1)" {
		t.Fatalf("overall breaches = %q (only trial-level egress belongs here)", got)
	}
	if c.FailOpen != 21 || c.Known()["srt:a, srt:b"] != (schema.KnownCount{Trials: 1, FailOpen: 1}) || len(c.Known()) != 1 {
		t.Fatalf("row: fail_open %d known %v", c.FailOpen, c.Known())
	}
	if c.Unreproduced["srt:a"] != 10 || c.Unreproduced["srt:b"] != 10 || len(c.Fixed()) != 0 {
		t.Fatalf("unreproduced %v fixed %v (the finding showed once: not fixed)", c.Unreproduced, c.Fixed())
	}
	// Equal counts sort by name; the 21 distinct breaches keep 8, the other 13 are counted.
	if len(c.Breaches) != schema.MaxBreaches || c.Breaches[0] != (schema.Breach{What: "udp: x", Trials: 1}) ||
		c.Breaches[7].What != "write /tmp/f06" || c.BreachesOther != 21-schema.MaxBreaches {
		t.Fatalf("breaches %v other %d", c.Breaches, c.BreachesOther)
	}
}

// The report keeps the first trial's sandbox settings, read while aggregating: the report's
// Settings section needs no second pass over the journals.
func TestSettingsFromTheFirstTrialThatHasThem(t *testing.T) {
	a, _ := New(Options{})
	a.Add(model.Record{Cell: clean, Trial: 1, Outcome: model.Correct})
	a.Add(model.Record{Cell: clean, Trial: 0, Outcome: model.Correct, Evidence: json.RawMessage(`{"settings":{"network":{"allowedDomains":["a"]}}}`)})
	a.Add(model.Record{Cell: clean, Trial: 2, Outcome: model.Correct, Evidence: json.RawMessage(`{"settings":{"other":1}}`)})
	if got := string(a.Report().Settings); got != `{"network":{"allowedDomains":["a"]}}` {
		t.Fatalf("settings %s", got)
	}
}

// A trial whose scenarios ran sessions of their own (claude-settings: one configuration each)
// records its evidence keyed by scenario: the report shows the settings of the first scenario
// that failed, and names it, instead of "Not recorded".
func TestSettingsOfAScenarioOwnSession(t *testing.T) {
	a, _ := New(Options{})
	a.Add(model.Record{Cell: clean, Trial: 0, Outcome: model.NonEnforcing,
		Scenarios: []model.Scenario{{Name: "c/ok", Outcome: model.Correct, Pass: true}, {Name: "c/bad", Outcome: model.NonEnforcing}},
		Evidence:  json.RawMessage(`{"c/ok":{"settings":{"ok":1}},"c/bad":{"settings":{"bad":1}}}`)})
	rep := a.Report()
	if got := string(rep.Settings); got != `{"bad":1}` || rep.SettingsOf != "c/bad" {
		t.Fatalf("settings %s of %q, want the failing scenario's", got, rep.SettingsOf)
	}
	a, _ = New(Options{})
	a.Add(model.Record{Cell: clean, Trial: 0, Outcome: model.Correct,
		Scenarios: []model.Scenario{{Name: "c/ok", Outcome: model.Correct, Pass: true}},
		Evidence:  json.RawMessage(`{"c/ok":{"settings":{"ok":1}}}`)})
	if rep := a.Report(); string(rep.Settings) != `{"ok":1}` || rep.SettingsOf != "c/ok" {
		t.Fatalf("settings %s of %q, want the first scenario's", rep.Settings, rep.SettingsOf)
	}
}
