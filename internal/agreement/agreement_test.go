//go:build linux

// Package agreement drives the same crafted journals through every tool that turns trials into
// a verdict — the journal's compaction, the runner's stopping rule, the aggregate and `run`'s
// judgement, compare, the gate and preflight — and requires the one answer the rule in model
// gives, under each tool's acceptance. It holds tests only.
package agreement

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/compare"
	"github.com/sandcheck/sandcheck/reports/gate"
	"github.com/sandcheck/sandcheck/reports/runsummary"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/suites/preflight"
	"github.com/sandcheck/sandcheck/wire/journal"
)

const (
	hooksID  = "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"
	tmpdirID = "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*"
	bypassID = "claude-code:claude-settings/permissions/bypass#bypass"
	dnsLine  = "denied dns A q-1.denied.sandcheck.test on denied.sandcheck.test:53 from 198.19.0.2:4000"
	httpLine = "denied http GET /http/x on denied.sandcheck.test:80 from 198.18.0.2:4242"
	allowed  = "allowed http GET /direct/x on allowed.sandcheck.test:80 from 198.18.0.2:4243"
)

var cell = model.Cell{ID: "c", Target: "srt", Host: "local", User: model.UserUnprivileged}

func pass(name string) model.Scenario {
	return model.Scenario{Name: name, Outcome: model.Correct, Pass: true}
}

// srtKnown is what a healthy srt trial shows: its accepted findings, one fail-open, one not.
func srtKnown() []model.Scenario {
	return []model.Scenario{pass("network/seed"),
		{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Breaches: []model.Breach{
			{Scenario: "filesystem/protected/git-hooks-new-repo", Check: "$WORKSPACE/newrepo/.git/hooks/pre-commit", Outcome: model.NonEnforcing, What: "write hooks", Known: hooksID}}},
		{Name: "filesystem/workspace/tmpdir", Outcome: model.AllowedBlocked, Breaches: []model.Breach{
			{Outcome: model.AllowedBlocked, What: "write /tmp/claude refused", Known: tmpdirID}}}}
}

// journals are the crafted cases: each a run of one cell, all its trials alike but the last.
var journals = []struct {
	name string
	last model.Record
}{
	{"healthy", model.Record{Outcome: model.Correct, Scenarios: []model.Scenario{pass("network/seed")}}},
	{"known findings only", model.Record{Outcome: model.NonEnforcing, Scenarios: srtKnown()}},
	{"egress beside a known fail-open finding", model.Record{Outcome: model.NonEnforcing, Scenarios: srtKnown(), Egress: []string{dnsLine}}},
	{"egress a known breach lists", model.Record{Outcome: model.NonEnforcing, Egress: []string{httpLine}, Scenarios: []model.Scenario{
		{Name: "claude-settings/permissions/bypass", Outcome: model.NonEnforcing, Breaches: []model.Breach{
			{Outcome: model.NonEnforcing, What: "ran", Known: bypassID, Egress: []string{httpLine}}}}}}},
	{"killed after egress", model.Record{Outcome: model.NonEnforcing, TimedOut: true, Egress: []string{httpLine}}},
	{"killed after an allowed host's egress (deny-all)", model.Record{Outcome: model.NonEnforcing, TimedOut: true, Egress: []string{allowed}}},
	{"a new fail-closed failure", model.Record{Outcome: model.ProxyDead, Scenarios: []model.Scenario{
		{Name: "network/seed", Outcome: model.ProxyDead, Breaches: []model.Breach{{Outcome: model.ProxyDead, What: "http: proxy dead"}}}}}},
	{"a new fail-open verdict", model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
		{Name: "filesystem/secret/read", Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "read secret"}}}}}},
	{"non-enforcing with nothing to show", model.Record{Outcome: model.NonEnforcing}},
	{"a spec passing a fail-open", model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.NonEnforcing, Pass: true}}}},
	{"the trial failed before any verdict", model.Record{Outcome: model.SandboxFailed, Hint: "bwrap: no"}},
	{"harness trouble", model.Record{Outcome: model.HarnessError, Error: "marker missing", Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.HarnessError}}}},
}

// trials is the journal of one case: nine healthy trials, then the case's.
func trials(last model.Record) []model.Record {
	var out []model.Record
	for i := range 10 {
		r := model.Record{Outcome: model.Correct, Scenarios: []model.Scenario{pass("network/seed")}}
		if i == 9 {
			r = last
		}
		r.V, r.RunID, r.Cell, r.Trial = journal.SchemaVersion, "run", cell, i
		out = append(out, r)
	}
	return out
}

// idsOf lists every known finding a journal names: the gate accepts them all, which must be the
// same as `run` accepting every known finding.
func idsOf(recs []model.Record) []string {
	seen := map[string]bool{}
	var ids []string
	for _, r := range recs {
		for _, s := range r.Scenarios {
			for _, b := range s.Breaches {
				for _, id := range b.KnownIDs() {
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
		}
	}
	return ids
}

func TestEveryToolGivesTheOneAnswer(t *testing.T) {
	every := model.Accept{Every: true}
	for _, c := range journals {
		t.Run(c.name, func(t *testing.T) {
			recs := trials(c.last)
			// The rule itself, under `run`'s acceptance and accepting nothing.
			var failOpen, failsOutside, failOpenStrict bool
			for _, r := range recs {
				failOpen = failOpen || !r.FailOpen().MetBy(every)
				failsOutside = failsOutside || !r.Failure().MetBy(every)
				failOpenStrict = failOpenStrict || !r.FailOpen().MetBy(model.Accept{})
			}

			// The journal keeps the evidence of every failure no finding covers, and of harness trouble.
			for _, r := range recs {
				if bad := !r.Failure().MetBy(every) || r.Harness(); bad && !journal.KeepsEvidence(r) {
					t.Errorf("journal compacts trial %d, which fails outside the known findings", r.Trial)
				}
			}
			// The runner's stopping rule never counts such a trial as a pass.
			for _, r := range recs {
				if p, counted := runner.Passed(r); p && !r.Failure().MetBy(every) || counted != r.Measured() {
					t.Errorf("runner.Passed(trial %d) = %v, %v", r.Trial, p, counted)
				}
			}

			rep := report(t, recs, "new")
			// run: exit 1 exactly when something fails outside the known findings.
			v := runsummary.Judge(rep, []model.Cell{cell}, 0.5)
			if got := v.Kind == runsummary.Fail; got != failsOutside {
				t.Errorf("run: %v %q, the rule says fails outside the known findings = %v", v.Kind, v.Reasons, failsOutside)
			}
			if got := strings.Contains(strings.Join(v.Reasons, "\n"), "fail-open"); got != failOpen {
				t.Errorf("run's reasons %q name a fail-open = %v, the rule says %v", v.Reasons, got, failOpen)
			}
			// compare, against the same report as its baseline (no regression possible): fails
			// exactly on fail-open outside the known findings.
			res, err := compare.Compare(rep, rep, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.FailOpen) > 0; got != failOpen {
				t.Errorf("compare: fail-open %v, the rule says %v", res.FailOpen, failOpen)
			}
			// The gate, accepting every finding the journal names: the same fail-open answer as
			// run; accepting none: the strict one.
			for _, g := range []struct {
				policy gate.Policy
				want   bool
			}{{gate.Policy{AcceptKnown: idsOf(recs)}, failOpen}, {gate.Policy{}, failOpenStrict}} {
				got := false
				for _, viol := range gate.Evaluate(rep, g.policy).Violations {
					got = got || viol.Rule == gate.RuleNonEnforcing
				}
				if got != g.want {
					t.Errorf("gate accepting %v: non-enforcing %v, the rule says %v", g.policy.AcceptKnown, got, g.want)
				}
			}
			// preflight, on the case's trial, with --accept-known (every finding) and without
			// (fail-closed ones only).
			last := recs[len(recs)-1]
			res2 := &preflight.Result{Trial: last}
			if got := res2.Failure(preflight.Accept(true)) != ""; got != !last.Failure().MetBy(every) {
				t.Errorf("preflight --accept-known: failure %v, the rule says %v", got, !last.Failure().MetBy(every))
			}
			strict := model.Accept{FailClosed: true}
			if got := res2.Failure(preflight.Accept(false)) != ""; got != !last.Failure().MetBy(strict) {
				t.Errorf("preflight: failure %v, the rule says %v", got, !last.Failure().MetBy(strict))
			}
		})
	}
}

// report writes recs as a real journal and reads it back as `sandcheck report` does.
func report(t *testing.T, recs []model.Record, run string) *schema.Report {
	t.Helper()
	dir := t.TempDir()
	w, err := journal.OpenWriter(filepath.Join(dir, run+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, _, err := aggregate.FromJournals([]string{w.Path()}, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Through report.json, as the gate and compare read it in CI.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "report.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := schema.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
