//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
)

// hasPair says argv holds flag followed by value.
func hasPair(argv []string, flag, value string) bool {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag && argv[i+1] == value {
			return true
		}
	}
	return false
}

// planAndArgv plans `run args` and builds the argv of a trial of its first cell.
func planAndArgv(t *testing.T, args ...string) (*runPlan, []string) {
	t.Helper()
	var stderr bytes.Buffer
	p, code := planRun(args, &stderr)
	if p == nil {
		t.Fatalf("run %q: exit %d: %s", args, code, stderr.String())
	}
	cells := p.Runner.Shard.Select(p.Runner.Cells)
	if len(cells) == 0 {
		cells = p.Runner.Cells
	}
	tr := runner.Trial{Cell: cells[0], Index: 1, Timeout: p.Runner.Timeout, Budget: runner.TrialBudget(p.Runner.Timeout)}
	return p, orchestrate.TrialArgv("/bin/sandcheck", p.Matrix, tr, &p.Trial)
}

// Every flag `run` accepts must reach the trial's argv or the run's options: a table of flag ->
// observable effect, each checked to differ from a run without the flag, and a flag missing from
// the table fails the test, so a new flag cannot be dropped silently.
func TestEveryRunFlagIsHonoured(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "m.yaml")
	os.WriteFile(mf, []byte("targets:\n  - name: command\n    settings: {argv: [\"sh\", \"-c\", \"{{.Command}}\"]}\nhosts:\n  - name: local\n    kind: local\ntrials: 3\n"), 0o644)
	ts := `{"argv":["sh","-c","{{.Command}}; sleep 60"],"reach":["http"]}`
	type effect func(p *runPlan, argv []string) bool
	table := map[string]struct {
		args []string
		ok   effect
	}{
		"target":      {[]string{"--target", "bwrap"}, func(p *runPlan, a []string) bool { return hasPair(a, "--target", "bwrap") }},
		"target-path": {[]string{"--target-path", "/opt/srt"}, func(p *runPlan, a []string) bool { return hasPair(a, "--target-path", "/opt/srt") }},
		"settings":    {[]string{"--settings", "/etc/my.json"}, func(p *runPlan, a []string) bool { return hasPair(a, "--settings", "/etc/my.json") }},
		"hostnames":   {[]string{"--hostnames", "ip"}, func(p *runPlan, a []string) bool { return hasPair(a, "--hostnames", "ip") }},
		"target-settings": {[]string{"--target-settings", ts}, func(p *runPlan, a []string) bool {
			i := slices.Index(a, "--target-settings")
			return i >= 0 && strings.Contains(a[i+1], "sleep 60")
		}},
		"label-filter": {[]string{"--label-filter", "network"}, func(p *runPlan, a []string) bool {
			return hasPair(a, "--label-filter", "network") && p.Runner.Cells[0].Labels == "network"
		}},
		"fault": {[]string{"--fault", "bridge-absent"}, func(p *runPlan, a []string) bool { return hasPair(a, "--fault", "bridge-absent") }},
		"user": {[]string{"--user", "root"}, func(p *runPlan, a []string) bool {
			return hasPair(a, "--user", "root") && p.Runner.Cells[0].User == "root" && len(p.Runner.Cells) == 1
		}},
		"matrix": {[]string{"--matrix", mf}, func(p *runPlan, a []string) bool { return hasPair(a, "--target", "command") && p.Runner.Trials == 3 }},
		"n":      {[]string{"-n", "7"}, func(p *runPlan, a []string) bool { return p.Runner.Trials == 7 }},
		"j":      {[]string{"-j", "3"}, func(p *runPlan, a []string) bool { return p.Runner.Parallel == 3 }},
		"timeout": {[]string{"--timeout", "20s"}, func(p *runPlan, a []string) bool {
			return p.Runner.Timeout == 20*time.Second && hasPair(a, "--budget", "18s")
		}},
		"out":    {[]string{"--out", filepath.Join(dir, "other")}, func(p *runPlan, a []string) bool { return p.Runner.Dir == filepath.Join(dir, "other") }},
		"resume": {[]string{"--resume"}, func(p *runPlan, a []string) bool { return p.Runner.Resume }},
		"shard": {[]string{"--shard", "1/2"}, func(p *runPlan, a []string) bool {
			return p.Runner.Shard == matrix.Shard{I: 1, N: 2}
		}},
		"json":             {[]string{"--json"}, func(p *runPlan, a []string) bool { return p.asJSON }},
		"plain":            {[]string{"--plain"}, func(p *runPlan, a []string) bool { return p.Runner.Plain }},
		"full-journal":     {[]string{"--full-journal"}, func(p *runPlan, a []string) bool { return p.Runner.FullJournal }},
		"max-harness-rate": {[]string{"--max-harness-rate", "0.2"}, func(p *runPlan, a []string) bool { return p.maxHarness == 0.2 }},
		"repro-dir": {[]string{"--repro-dir", "/tmp/r"}, func(p *runPlan, a []string) bool {
			return p.reproDir == "/tmp/r" && p.Runner.KeepFailures // the reproducers are made from the failures' evidence
		}},
		"keep-failures": {[]string{"--keep-failures"}, func(p *runPlan, a []string) bool { return p.Runner.KeepFailures }},
	}
	base := []string{"--out", filepath.Join(dir, "run")}
	p0, argv0 := planAndArgv(t, base...)
	fs, _ := newRunFlags(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		e, ok := table[f.Name]
		if !ok {
			t.Errorf("run --%s has no entry in this table: say where it takes effect and test it", f.Name)
			return
		}
		if e.ok(p0, argv0) {
			t.Errorf("--%s: its effect shows without the flag too; the check proves nothing", f.Name)
		}
		p, argv := planAndArgv(t, append(slices.Clone(base), e.args...)...)
		if !e.ok(p, argv) {
			t.Errorf("run %s: no effect on the trial (%q) or the run (%+v)", strings.Join(e.args, " "), argv, p.Runner)
		}
	})
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"--max-harness-rate", "1.5"},
		{"--target-settings", "[1,2]"},
		{"--target-settings", "{not json"},
		{"--target", "nosuch"},
		{"--target", "command", "--target-settings", `{"argv":["sh","-c","{{.Command}}"],"capabilities":["deny-raed"]}`},
		{"-n", "0"},
		{"--user", "Not A User"},
		{"stray-argument"},
	} {
		var stderr bytes.Buffer
		if p, code := planRun(append([]string{"--out", t.TempDir()}, args...), &stderr); p != nil || code != cli.ExitUsage {
			t.Errorf("run %q: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
	// In a matrix: the file, the line and the field.
	mf := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(mf, []byte("targets:\n  - name: command\n    settings: {argv: [sh, -c, \"{{.Command}}\"], capabilities: [deny-raed]}\nhosts:\n  - name: local\n    kind: local\n"), 0o644)
	var stderr bytes.Buffer
	if p, code := planRun([]string{"--matrix", mf, "--out", t.TempDir()}, &stderr); p != nil || code != cli.ExitUsage ||
		!strings.Contains(stderr.String(), "m.yaml:2: targets[0].name:") || !strings.Contains(stderr.String(), `unknown capability "deny-raed"`) {
		t.Errorf("a misspelt capability in a matrix: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if p, code := planRun([]string{"--resume"}, &stderr); p != nil || code != cli.ExitUsage {
		t.Errorf("run --resume without --out: exit %d", code)
	}
	stderr.Reset()
	if code := runCmd([]string{"--help"}, io.Discard, &stderr); code != 0 || !strings.Contains(stderr.String(), "Exit codes:") ||
		!strings.Contains(stderr.String(), "--max-harness-rate") {
		t.Fatalf("run --help: exit %d\n%s", code, stderr.String())
	}
}

// fakeRun runs `run` with trials made by rec (by trial index) instead of real ones.
func fakeRun(t *testing.T, rec func(i int) model.Record, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	saved := runExecutors
	t.Cleanup(func() { runExecutors = saved })
	runExecutors = func(context.Context, *matrix.Matrix, string, *orchestrate.Trial, io.Writer) (runner.Executor, func(), error) {
		return runner.ExecutorFunc(func(_ context.Context, tr runner.Trial) model.Record { return rec(tr.Index) }), func() {}, nil
	}
	var o, e bytes.Buffer
	code = runCmd(append([]string{"--plain", "-j", "1", "--out", filepath.Join(t.TempDir(), "run")}, args...), &o, &e)
	return code, o.String(), e.String()
}

func sc(name string, o model.Outcome, pass bool) model.Scenario {
	return model.Scenario{Name: name, Outcome: o, Pass: pass}
}

// trial is a record of scenarios, its outcome the worst failing one, as a real trial's is.
func trial(scs ...model.Scenario) model.Record {
	var failing []model.Outcome
	for _, s := range scs {
		if !s.Pass {
			failing = append(failing, s.Outcome)
		}
	}
	r := model.Record{Outcome: model.Correct, Scenarios: scs}
	if len(failing) > 0 {
		r.Outcome = model.Worst(failing...)
	}
	return r
}

func TestRunExitCodes(t *testing.T) {
	pass := sc("network/seed", model.Correct, true)
	known := sc("filesystem/protected/git-hooks-new-repo", model.NonEnforcing, false)
	known.Breaches = []model.Breach{{Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit", Known: "srt:filesystem/protected/git-hooks-new-repo"}}
	secret := sc("filesystem/secret", model.NonEnforcing, false)
	secret.Breaches = []model.Breach{{Outcome: model.NonEnforcing, What: "read $HOME/.ssh/id_sandcheck"}}
	blocked := sc("filesystem/workspace/tmpdir", model.AllowedBlocked, false)
	timeout := sc("network/seed", model.Timeout, false)
	egress := []string{"denied http GET /http/ab on denied.sandcheck.test:80 from 198.18.0.1:4242"}
	every := func(r model.Record) func(int) model.Record { return func(int) model.Record { return r } }
	firstK := func(k int, bad, good model.Record) func(int) model.Record {
		return func(i int) model.Record {
			if i < k {
				return bad
			}
			return good
		}
	}
	cases := []struct {
		name string
		rec  func(int) model.Record
		n    int
		args []string
		want int
		out  []string // in stdout
	}{
		{"all pass", every(trial(pass)), 2, nil, cli.ExitPass, []string{"exit 0"}},
		{"known finding only", every(trial(pass, known)), 2, nil, cli.ExitPass, []string{"(known finding srt:filesystem/protected/git-hooks-new-repo)", "breached: write $WORKSPACE/newrepo/.git/hooks/pre-commit"}},
		{"fail-open outside the known findings", every(trial(pass, known, secret)), 2, nil, cli.ExitFail,
			[]string{"why non-enforcing: filesystem/secret: read $HOME/.ssh/id_sandcheck", "exit 1"}},
		{"fail-closed outside the known findings", every(trial(pass, blocked)), 2, nil, cli.ExitFail, []string{"filesystem/workspace/tmpdir"}},
		{"result correct, egress streamed", every(model.Record{Outcome: model.NonEnforcing, Hint: "a fixture server logged " + egress[0] + " although the trial reported correct",
			Scenarios: []model.Scenario{pass}, Egress: egress}), 2, nil, cli.ExitFail, []string{"egress in 2 of 2 trials", "denied http GET /http/ab"}},
		{"timeout with egress", every(model.Record{Outcome: model.NonEnforcing, TimedOut: true, Egress: egress}), 2, nil, cli.ExitFail, []string{"fail-open in 2 of 2"}},
		{"timeout with egress under a known finding", every(model.Record{Outcome: model.NonEnforcing, TimedOut: true, Egress: egress,
			Scenarios: []model.Scenario{known}}), 2, nil, cli.ExitFail, nil},
		{"timeouts at the bound", firstK(1, trial(timeout), trial(pass)), 20, nil, cli.ExitPass, nil},
		{"timeouts above the bound", firstK(2, trial(timeout), trial(pass)), 20, nil, cli.ExitHarness, []string{"2 of 20 trials (10%)"}},
		{"harness errors above the bound", firstK(2, model.Record{Outcome: model.HarnessError, Error: "no result"}, trial(pass)), 20, nil, cli.ExitHarness, nil},
		{"harness bound raised", firstK(2, trial(timeout), trial(pass)), 20, []string{"--max-harness-rate", "0.1"}, cli.ExitPass, nil},
		{"fail-open wins over harness", firstK(10, trial(timeout), trial(secret)), 20, nil, cli.ExitFail, nil},
		// A known fail-open finding in every trial does not hide egress no verdict accounts for.
		{"egress beside a known fail-open finding", every(model.Record{Outcome: model.NonEnforcing, Egress: egress, Scenarios: []model.Scenario{pass, known}}),
			2, nil, cli.ExitFail, []string{"fail-open in 2 of 2 trials"}},
		// Every scenario not applicable: measured nothing, which is no pass (nor a failure).
		{"nothing applicable", every(trial(sc("filesystem/secret/read", model.NotApplicable, true))), 2, nil, cli.ExitHarness,
			[]string{"not applicable in every trial"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-n", itoa(c.n)}, c.args...)
			code, stdout, stderr := fakeRun(t, c.rec, args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.want, stdout, stderr)
			}
			for _, s := range c.out {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			code, js, _ := fakeRun(t, c.rec, append(args, "--json")...)
			var v struct {
				ExitCode int `json:"exit_code"`
				Cells    []struct {
					Known           *int `json:"known"`
					UnknownFailures *int `json:"unknown_failures"`
				} `json:"cells"`
			}
			if err := json.Unmarshal([]byte(js), &v); err != nil || v.ExitCode != code || code != c.want || len(v.Cells) != 1 ||
				v.Cells[0].Known == nil || v.Cells[0].UnknownFailures == nil {
				t.Fatalf("--json: exit %d, %v\n%s", code, err, js)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRunJSONCountsKnownAndUnknown(t *testing.T) {
	known := sc("filesystem/protected/git-hooks-new-repo", model.NonEnforcing, false)
	known.Breaches = []model.Breach{{Outcome: model.NonEnforcing, What: "write hooks", Known: "srt:filesystem/protected/git-hooks-new-repo"}}
	secret := sc("filesystem/secret", model.NonEnforcing, false)
	code, js, _ := fakeRun(t, func(int) model.Record { return trial(known, secret) }, "-n", "3", "--json")
	var v struct {
		ExitCode int `json:"exit_code"`
		Cells    []struct {
			Known, UnknownFailures, FailOpen int
		} `json:"cells"`
	}
	json.Unmarshal([]byte(strings.NewReplacer(`"unknown_failures"`, `"UnknownFailures"`, `"fail_open"`, `"FailOpen"`).Replace(js)), &v)
	if code != cli.ExitFail || v.ExitCode != cli.ExitFail || len(v.Cells) != 1 || v.Cells[0].Known != 3 || v.Cells[0].UnknownFailures != 3 || v.Cells[0].FailOpen != 3 {
		t.Fatalf("exit %d, %+v\n%s", code, v, js)
	}
}

func TestRunSummaryWording(t *testing.T) {
	na := sc("network/bypass/unix-socket", model.NotApplicable, true)
	na2 := sc("untrusted/proxy-env-dead", model.NotApplicable, true)
	pass := sc("network/seed", model.Correct, true)
	fixed := sc("filesystem/workspace/tmpdir", model.Correct, true)
	fixed.Unreproduced = "srt:filesystem/workspace/tmpdir"
	partly := sc("concurrency/shared-workspace/k4", model.Correct, true)
	code, stdout, _ := fakeRun(t, func(i int) model.Record {
		p := partly
		if i == 0 {
			p.Unreproduced = "srt:concurrency/shared-workspace/k4" // intermittent: reproduced once
		}
		return trial(na, na2, pass, fixed, p)
	}, "-n", "2")
	if code != cli.ExitPass {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	for _, want := range []string{
		"3 of 3 applicable scenarios passed in every trial, 2 not applicable",
		"applicable: concurrency 1 of 1, filesystem 1 of 1, network 1 of 2, untrusted 0 of 1",
		"known finding srt:filesystem/workspace/tmpdir did not reproduce in 2/2 trials (fixed?)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "5 of 5") || strings.Contains(stdout, "shared-workspace/k4 did not reproduce") {
		t.Errorf("not-applicable counted as passed, or an intermittent finding called fixed:\n%s", stdout)
	}
}

// A journal that cannot be read back has no verdict: run exits 2, never judging an empty report
// (which would pass). Here a corrupt middle line, written while the second trial runs.
func TestRunWithoutAReadableJournalHasNoVerdict(t *testing.T) {
	saved := runExecutors
	t.Cleanup(func() { runExecutors = saved })
	out := filepath.Join(t.TempDir(), "run")
	runExecutors = func(context.Context, *matrix.Matrix, string, *orchestrate.Trial, io.Writer) (runner.Executor, func(), error) {
		return runner.ExecutorFunc(func(_ context.Context, tr runner.Trial) model.Record {
			if tr.Index == 1 {
				f, err := os.OpenFile(filepath.Join(out, "journal.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
				} else {
					f.WriteString("{\"v\":3,\"cell\":{\"id\":\n")
					f.Close()
				}
			}
			return trial(sc("network/seed", model.Correct, true))
		}), func() {}, nil
	}
	var o, e bytes.Buffer
	code := runCmd([]string{"--plain", "-j", "1", "-n", "3", "--out", out}, &o, &e)
	if code != cli.ExitUsage || !strings.Contains(e.String(), "the journal cannot be judged") || strings.Contains(o.String(), "exit 0") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
}

func TestRunHostThatCannotBePreparedIsAConfigError(t *testing.T) {
	saved := runExecutors
	t.Cleanup(func() { runExecutors = saved })
	runExecutors = func(context.Context, *matrix.Matrix, string, *orchestrate.Trial, io.Writer) (runner.Executor, func(), error) {
		return nil, func() {}, errors.New("prepare host vm: no kernel")
	}
	var stderr bytes.Buffer
	if code := runCmd([]string{"--out", t.TempDir()}, io.Discard, &stderr); code != cli.ExitUsage || !strings.Contains(stderr.String(), "no kernel") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
