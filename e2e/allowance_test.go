package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// The start-up race allowances, on crafted journal records: no sandbox runs.

const (
	raceHint    = "proxy-dead: proxy came up late: the first request was refused, later ones reached the proxy"
	starvedHint = "srt refused to start: Failed to create bridge sockets after 5 attempts"
)

// trial is one crafted journal record of cell c1 in run r1, with one scenario verdict per
// (scenario, verdict) pair given; every other scenario of the row list is correct.
func trial(i int, target string, vs map[string]model.Scenario, more ...func(*model.Record)) model.Record {
	r := model.Record{V: 1, RunID: "r1", Cell: model.Cell{ID: "c1", Target: target, Version: "1.0", Host: "local"}, Trial: i, Outcome: model.Correct}
	for name, sc := range vs {
		sc.Name = name
		if sc.Outcome == "" {
			sc.Outcome, sc.Pass = model.Correct, true
		}
		r.Scenarios = append(r.Scenarios, sc)
		if !sc.Pass {
			r.Outcome, r.Hint = sc.Outcome, sc.Hint
		}
	}
	for _, m := range more {
		m(&r)
	}
	return r
}

// report aggregates records as `sandcheck run` does into report.json, and reads them as the
// allowances read the run's journal.
func report(t *testing.T, recs []model.Record) (*schema.Report, journalRows) {
	t.Helper()
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := journalRows{}
	for _, r := range recs {
		agg.Add(r)
		rows.add(r)
	}
	return agg.Report(), rows
}

// TestRaceAllowanceNamesItsTrial: the Claude Code start-up race excuses one trial of a row, the
// one whose own verdict is proxy-dead with the race's hint and no known finding; every other
// failure of the row counts, whatever the row's counts and example hints look like.
func TestRaceAllowanceNamesItsTrial(t *testing.T) {
	const sc = "network/x"
	known := model.Scenario{Outcome: model.ProxyDead, Hint: raceHint, Breaches: []model.Breach{{Outcome: model.ProxyDead, What: "race", Known: "claude-code:network/x#race"}}}
	race := model.Scenario{Outcome: model.ProxyDead, Hint: raceHint}
	other := model.Scenario{Outcome: model.ProxyDead, Hint: "proxy-dead: the relay died mid-trial"}
	refused := model.Scenario{Outcome: model.SandboxFailed, Hint: "bwrap: setting up uid map: Permission denied"}
	egress := func(r *model.Record) { r.Egress = []string{"denied http GET /x on denied.sandcheck.test:80"} }
	// Another scenario of the trial, a known fail-open, explains the trial's egress (one
	// claude-settings trial runs sixty scenarios, some of them known to leak).
	knownLeak := func(r *model.Record) {
		leak := "denied http GET /y on denied.sandcheck.test:80"
		r.Scenarios = append(r.Scenarios, model.Scenario{Name: "network/y", Outcome: model.NonEnforcing, Hint: "reached",
			Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "reached", Known: "claude-code:network/y#leak", Egress: []string{leak}}}})
		r.Egress, r.Outcome = []string{leak}, model.NonEnforcing
	}
	// A known leak beside egress it does not list: that egress is the trial's, and no race.
	otherLeak := func(r *model.Record) {
		knownLeak(r)
		r.Egress = append(r.Egress, "denied dns A q-1.denied.sandcheck.test")
	}
	timedOut := func(r *model.Record) { r.TimedOut = true }
	cases := []struct {
		name    string
		long    bool
		trials  map[int]model.Scenario
		mods    map[int]func(*model.Record)
		unknown int
		excused int // the excused trial's index, -1 for none
	}{
		{"one race trial is excused, by run and index", false, map[int]model.Scenario{3: race}, nil, 0, 3},
		{"a known race elsewhere excuses no other failure", false, map[int]model.Scenario{0: known, 2: other}, nil, 1, -1},
		{"a known race elsewhere excuses no sandbox failure", false, map[int]model.Scenario{0: known, 2: refused}, nil, 1, -1},
		{"known, excused, and a second failure that still counts", false, map[int]model.Scenario{0: known, 1: race, 2: refused}, nil, 1, 1},
		{"two race trials: one is excused", false, map[int]model.Scenario{1: race, 3: race}, nil, 1, 1},
		{"the race's hint under another outcome", false, map[int]model.Scenario{1: {Outcome: model.SandboxFailed, Hint: raceHint}}, nil, 1, -1},
		{"a race trial whose record shows egress", false, map[int]model.Scenario{1: race}, map[int]func(*model.Record){1: egress}, 1, -1},
		{"a race trial whose egress another scenario's leak explains", false, map[int]model.Scenario{1: race}, map[int]func(*model.Record){1: knownLeak}, 0, 1},
		{"a race trial beside a known leak and egress it does not list", false, map[int]model.Scenario{1: race}, map[int]func(*model.Record){1: otherLeak}, 1, -1},
		{"a race trial that timed out", false, map[int]model.Scenario{1: race}, map[int]func(*model.Record){1: timedOut}, 1, -1},
		{"the long tier excuses nothing", true, map[int]model.Scenario{1: race}, nil, 1, -1},
		{"a healthy row", false, nil, nil, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long {
				t.Setenv("SANDCHECK_LONG", "1")
			} else {
				t.Setenv("SANDCHECK_LONG", "")
			}
			var recs []model.Record
			for i := range 5 {
				v, mods := map[string]model.Scenario{sc: c.trials[i]}, []func(*model.Record){}
				if m := c.mods[i]; m != nil {
					mods = append(mods, m)
				}
				recs = append(recs, trial(i, "claude-code", v, mods...))
			}
			rep, rows := report(t, recs)
			i := slices.IndexFunc(rep.Cells, func(c schema.Cell) bool { return c.Scenario == sc })
			if i < 0 {
				t.Fatalf("no row %s: %v", sc, rep.Cells)
			}
			unknown, excused, ok := claudeStartRace.unknownFailures(t, rep.Cells[i], rows)
			want := trialRef{Run: "r1", Cell: "c1", Trial: c.excused}
			if unknown != c.unknown || ok != (c.excused >= 0) || (ok && excused != want) {
				t.Errorf("unknown %d, excused %+v %v; want %d, excused trial %d", unknown, excused, ok, c.unknown, c.excused)
			}
		})
	}
}

// recordingTB keeps what a check reported.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper()             {}
func (r *recordingTB) Logf(string, ...any) {}
func (r *recordingTB) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}

// TestStarvedAllowancePinsPerRow: a trial srt refused to start in one row excuses that trial of
// that row only. A pinned finding of another row must still show in every trial.
func TestStarvedAllowancePinsPerRow(t *testing.T) {
	t.Setenv("SANDCHECK_LONG", "")
	const a, b = "bypass/matching/x", "bypass/ports/y"
	finding := knownfindings.Finding{ID: "srt:" + a + "#leak", Target: "srt", Scenario: a, Pos: "knownfindings.yaml:1"}
	leak := model.Scenario{Outcome: model.NonEnforcing, Hint: "reached", Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "reached", Known: finding.ID}}}
	starved := model.Scenario{Outcome: model.SandboxFailed, Hint: starvedHint}
	cases := []struct {
		name   string
		trials map[int]map[string]model.Scenario
		errors int
	}{
		{"the finding misses a trial another row's starved start took", map[int]map[string]model.Scenario{
			0: {a: leak, b: {}}, 1: {a: leak, b: {}}, 2: {a: leak, b: starved}, 3: {a: leak, b: {}}, 4: {a: {}, b: {}}}, 1},
		{"the finding misses the trial its own row's starved start took", map[int]map[string]model.Scenario{
			0: {a: leak, b: {}}, 1: {a: leak, b: {}}, 2: {a: leak, b: {}}, 3: {a: leak, b: {}}, 4: {a: starved, b: {}}}, 0},
		{"a starved start in each of two trials of one row", map[int]map[string]model.Scenario{
			0: {a: leak, b: starved}, 1: {a: leak, b: {}}, 2: {a: leak, b: starved}, 3: {a: leak, b: {}}, 4: {a: leak, b: {}}}, 1},
		{"healthy", map[int]map[string]model.Scenario{
			0: {a: leak, b: {}}, 1: {a: leak, b: {}}, 2: {a: leak, b: {}}, 3: {a: leak, b: {}}, 4: {a: leak, b: {}}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var recs []model.Record
			for i := range 5 {
				recs = append(recs, trial(i, "srt", c.trials[i]))
			}
			rep, rows := report(t, recs)
			rt := &recordingTB{}
			checkBypassTarget(rt, "srt", 5, rep, rows, []knownfindings.Finding{finding})
			if len(rt.errors) != c.errors {
				t.Errorf("%d errors, want %d:\n%s", len(rt.errors), c.errors, strings.Join(rt.errors, "\n"))
			}
		})
	}
}

// TestStarvedTrialExcuse: the detector's trial-level rows: a trial srt refused to start is
// excused by its own record, clean of anything else, and only one per cell.
func TestStarvedTrialExcuse(t *testing.T) {
	t.Setenv("SANDCHECK_LONG", "")
	starved := func(r *model.Record) { r.Outcome, r.Hint = model.SandboxFailed, starvedHint }
	harness := func(r *model.Record) { r.Error = "exit 1: parse error" }
	cases := []struct {
		name string
		mods map[int][]func(*model.Record)
		want int // the excused trial, -1 for none
	}{
		{"one starved start", map[int][]func(*model.Record){2: {starved}}, 2},
		{"two: the first is excused", map[int][]func(*model.Record){1: {starved}, 3: {starved}}, 1},
		{"with harness trouble", map[int][]func(*model.Record){2: {starved, harness}}, -1},
		{"healthy", nil, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := journalRows{}
			for i := range 5 {
				rows.add(trial(i, "srt", map[string]model.Scenario{"network/seed": {}}, c.mods[i]...))
			}
			ex, ok := srtStarvedRace.excuse(t, "healthy", rows[rowOfTrials("c1")])
			if ok != (c.want >= 0) || (ok && ex != (trialRef{Run: "r1", Cell: "c1", Trial: c.want})) {
				t.Errorf("excused %+v %v, want trial %d", ex, ok, c.want)
			}
		})
	}
}
