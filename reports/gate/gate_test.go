package gate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// trialsSpec: n trials of one scenario in one cell; fail maps trial index -> outcome (Pass=false
// unless the index is in expected).
type trialsSpec struct {
	host, fault, scenario string
	n                     int
	fail                  map[int]model.Outcome
	expected              map[int]bool
}

func report(t *testing.T, specs ...trialsSpec) *schema.Report {
	t.Helper()
	a, _ := aggregate.New(aggregate.Options{})
	for _, s := range specs {
		for i := 0; i < s.n; i++ {
			o, pass := model.Correct, true
			if f, ok := s.fail[i]; ok {
				o, pass = f, s.expected[i]
			}
			a.Add(model.Record{Cell: model.Cell{ID: s.host + "|" + s.fault, Target: "srt", Host: s.host, Fault: s.fault}, Trial: i, Outcome: o,
				Scenarios: []model.Scenario{{Name: s.scenario, Outcome: o, Pass: pass}}})
		}
	}
	return a.Report()
}

func rules(r Result) string {
	var s []string
	for _, v := range r.Violations {
		s = append(s, v.Rule+"@"+v.Cell)
	}
	return strings.Join(s, " ")
}

func TestEvaluateKnownAnswers(t *testing.T) {
	ptr := func(f float64) *float64 { return &f }
	cases := []struct {
		name   string
		rep    *schema.Report
		policy Policy
		want   string
	}{
		{"empty report ran nothing", &schema.Report{SchemaVersion: 1}, DefaultPolicy(), "ran-nothing@"},
		// 0/73 clean: Wilson upper = 3.84/76.84 = 0.04998 < 0.05 -> pass.
		{"73 clean trials pass", report(t, trialsSpec{"native", "", "net/seed", 73, nil, nil}), DefaultPolicy(), ""},
		// 0/72 clean: upper 0.0506 > 0.05 -> too few trials to claim the bound.
		{"72 clean trials are too few", report(t, trialsSpec{"native", "", "net/seed", 72, nil, nil}), DefaultPolicy(), "min-trials@srt@native"},
		// A lower min_trials cannot lower what the bound needs: 0/72 still shows nothing.
		{"min_trials below the bound's need", report(t, trialsSpec{"native", "", "net/seed", 72, nil, nil}), Policy{MinTrials: intp(10)}, "min-trials@srt@native"},
		// One non-enforcing in 1000: no threshold.
		{"one non-enforcing fails", report(t, trialsSpec{"wsl", "", "net/seed", 1000, map[int]model.Outcome{500: model.NonEnforcing}, nil}), DefaultPolicy(), "non-enforcing@srt@wsl"},
		// 5 proxy-dead in 1000: rate 0.5%, Wilson upper ~1.17% < 5% -> pass.
		{"rare proxy-dead within bound", report(t, trialsSpec{"wsl", "", "net/seed", 1000, map[int]model.Outcome{1: model.ProxyDead, 2: model.ProxyDead, 3: model.ProxyDead, 4: model.ProxyDead, 5: model.ProxyDead}, nil}), DefaultPolicy(), ""},
		// Same counts against a 1% bound -> violation.
		{"rare proxy-dead above a strict bound", report(t, trialsSpec{"wsl", "", "net/seed", 1000, map[int]model.Outcome{1: model.ProxyDead, 2: model.ProxyDead, 3: model.ProxyDead, 4: model.ProxyDead, 5: model.ProxyDead}, nil}), Policy{MaxFailClosedUpper: ptr(0.01)}, "fail-closed-bound@srt@wsl net/seed"},
		{"min trials per row", report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil}, trialsSpec{"mac", "", "net/seed", 80, nil, nil}), Policy{MinTrials: intp(90)}, "min-trials@srt@mac"},
		{"expected-count guards", report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil}), Policy{MinCells: 2, MinScenarios: 2, RequiredScenarios: []string{"net/seed", "fs/write"}}, "min-cells@ min-scenarios@ required-scenario@"},
		// A fault cell whose scenario "expected" non-enforcing (an open-proxy fault): a fail-open
		// is one whatever a spec said of it.
		{"fault cell", report(t, trialsSpec{"native", "open-proxy", "net/seed", 100, map[int]model.Outcome{3: model.NonEnforcing}, map[int]bool{3: true}}), DefaultPolicy(), "non-enforcing@srt@native fault=open-proxy"},
		// Not applicable in every trial: exempt from min-trials, bounded by max_not_applicable.
		{"n/a rows unbounded by default", report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil}, trialsSpec{"native", "", "fs/read", 100, allNA(100), allPass(100)}), DefaultPolicy(), ""},
		{"n/a rows over the bound", report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil}, trialsSpec{"native", "", "fs/read", 100, allNA(100), allPass(100)}), Policy{MaxNotApplicable: ptr(0.5)}, "not-applicable-bound@srt@native fs/read"},
		{"a required scenario n/a everywhere", report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil}, trialsSpec{"native", "", "fs/read", 100, allNA(100), allPass(100)}), Policy{RequiredScenarios: []string{"fs/read"}}, "required-scenario@"},
		{"trials that never reached a scenario", func() *schema.Report {
			a, _ := aggregate.New(aggregate.Options{})
			for i := 0; i < 5; i++ {
				a.Add(model.Record{Cell: model.Cell{ID: "x", Target: "srt", Host: "ci"}, Trial: i, Outcome: model.HarnessError})
			}
			return a.Report()
		}(), DefaultPolicy(), "harness-bound@srt@ci min-trials@srt@ci"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rules(Evaluate(c.rep, c.policy)); got != c.want {
				t.Fatalf("violations = %q, want %q", got, c.want)
			}
		})
	}
	// Guard the boundary the cases above rely on.
	if u := stats.Wilson(0, 73).High; u >= 0.05 {
		t.Fatalf("Wilson(0,73) upper = %v", u)
	}
	if cleanTrialsFor(0.05, "wilson") != 73 || cleanTrialsFor(0.05, "clopper-pearson") != 72 {
		t.Fatalf("clean trials: %d %d", cleanTrialsFor(0.05, "wilson"), cleanTrialsFor(0.05, "clopper-pearson"))
	}
}

func intp(i int) *int { return &i }

func allNA(n int) map[int]model.Outcome {
	m := map[int]model.Outcome{}
	for i := range n {
		m[i] = model.NotApplicable
	}
	return m
}

func allPass(n int) map[int]bool {
	m := map[int]bool{}
	for i := range n {
		m[i] = true
	}
	return m
}

func TestViolationMessagesNameCells(t *testing.T) {
	rep := report(t,
		trialsSpec{"wsl", "", "net/seed", 10, map[int]model.Outcome{0: model.ProxyDead, 1: model.NonEnforcing}, nil},
		trialsSpec{"native", "", "net/seed", 10, nil, nil})
	var buf bytes.Buffer
	vs := Evaluate(rep, DefaultPolicy())
	WriteText(&buf, vs)
	out := buf.String()
	for _, want := range []string{
		"  non-enforcing: srt@wsl: fail-open in 1 of 10 trials: net/seed non-enforcing in 1: ",
		"  fail-closed-bound: srt@wsl net/seed: fail-closed rate 1/10 = 10.00%, 95% upper bound 40.42% exceeds 5.00%: proxy-dead x1",
		"  min-trials: srt@native: 10 measured trials held, 73 needed (1 scenario(s): net/seed)",
		"FAIL: 1 blocker(s) (1 fail-open), 1 fail-closed bound(s), 2 cell(s) with insufficient evidence",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if vs.Violations[0].Rule != RuleNonEnforcing {
		t.Error("security violations come first")
	}
	buf.Reset()
	WriteText(&buf, Result{Rows: 3, Cells: 1})
	if want := "blockers (fail-open first): none\nfail-closed bounds: none\ninsufficient evidence (measured trials held / needed, per cell): none\nPASS: 3 rows in 1 cells within policy\n"; buf.String() != want {
		t.Fatalf("pass text = %q", buf.String())
	}
}

func TestPolicyParsing(t *testing.T) {
	p, err := ParsePolicy([]byte(""), "gate.yaml")
	if err != nil || *p.MaxFailClosedUpper != 0.05 || *p.MinTrials != 73 || p.Interval != "wilson" || *p.MaxHarnessRate != 0.05 {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	p, err = ParsePolicy([]byte("max_fail_closed_upper: 0.02\nmin_trials: 300\nrequired_scenarios: [network/seed]\ninterval: clopper-pearson\nmax_harness_rate: 0\naccept_known: [\"srt:network/x\"]\n"), "gate.yaml")
	if err != nil || *p.MaxFailClosedUpper != 0.02 || *p.MinTrials != 300 || p.RequiredScenarios[0] != "network/seed" || *p.MaxHarnessRate != 0 || p.AcceptKnown[0] != "srt:network/x" {
		t.Fatalf("parsed: %+v %v", p, err)
	}
	// The default min_trials follows the bound and the interval.
	if p, _ := ParsePolicy([]byte("max_fail_closed_upper: 0.02\n"), "g"); *p.MinTrials != 189 {
		t.Fatalf("min_trials for 2%% Wilson = %d, want 189", *p.MinTrials)
	}
	if p, _ := ParsePolicy([]byte("interval: clopper-pearson\n"), "g"); *p.MinTrials != 72 {
		t.Fatalf("min_trials for 5%% Clopper-Pearson = %d, want 72", *p.MinTrials)
	}
	bad := []struct{ yaml, want string }{
		{"min_trials: 3\nmax_fail_closed_uper: 0.1\n", "gate.yaml:2: max_fail_closed_uper: unknown field"},
		{"min_trials: lots\n", "gate.yaml:1: min_trials: cannot unmarshal"},
		{"min_cells: 1\nmax_fail_closed_upper: 5\n", "gate.yaml:2: max_fail_closed_upper: 5 is not in (0, 1]"},
		{"interval: bayes\n", "gate.yaml:1: interval: \"bayes\" is not wilson or clopper-pearson"},
		{"min_trials: -1\n", "gate.yaml:1: min_trials: -1 < 0"},
		{"required_scenarios:\n  - a\n  - ''\n", "gate.yaml:1: required_scenarios: empty scenario name"},
		{"- a list\n", "gate.yaml:1: (document): cannot unmarshal"},
		{"max_harness_rate: 1.5\n", "gate.yaml:1: max_harness_rate: 1.5 is not in [0, 1]"},
		{"accept_known: ['']\n", "gate.yaml:1: accept_known: empty finding id"},
	}
	for _, b := range bad {
		_, err := ParsePolicy([]byte(b.yaml), "gate.yaml")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParsePolicy(%q) err = %v, want %q", b.yaml, err, b.want)
		}
		if err != nil && !errors.Is(err, errPolicy) && !strings.Contains(b.yaml, "- a list") {
			t.Errorf("policy errors must wrap errPolicy: %v", err)
		}
	}
}

func TestFileEndToEnd(t *testing.T) {
	dir := t.TempDir()
	rep := report(t, trialsSpec{"native", "", "net/seed", 100, nil, nil})
	if err := format.WriteAll(dir, rep, format.Options{}); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "gate.yaml")
	os.WriteFile(pol, []byte("min_trials: 100\nmin_cells: 1\n"), 0o644)
	vs, err := File(filepath.Join(dir, format.JSONFile), pol)
	if err != nil || vs.Failed() {
		t.Fatalf("clean 100-trial report: %v %v", vs, err)
	}
	os.WriteFile(pol, []byte("min_trials: 101\n"), 0o644)
	vs, err = File(filepath.Join(dir, format.JSONFile), pol)
	if err != nil || rules(vs) != "min-trials@srt@native" {
		t.Fatalf("101 required: %v %v", vs, err)
	}
	os.WriteFile(pol, []byte("bogus: 1\n"), 0o644)
	if _, err := File(filepath.Join(dir, format.JSONFile), pol); err == nil || !strings.Contains(err.Error(), pol+":1: bogus: unknown field") {
		t.Fatalf("bad policy: %v", err)
	}
}
