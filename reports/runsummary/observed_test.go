package runsummary

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
)

// The summary leads with one line a newcomer can act on, and counts trials by what they amount to
// outside the known findings, the known ones in a column of their own: a healthy srt with its
// known findings reads "nothing new", never "100% non-enforcing" beside "every scenario passed".
func TestHeadlineAndOutcomesOutsideKnown(t *testing.T) {
	cell := model.Cell{ID: "c", Target: "srt", Host: "local", User: model.UserUnprivileged}
	known := []model.Scenario{
		{Name: "network/seed", Outcome: model.Correct, Pass: true},
		{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Breaches: []model.Breach{
			{Outcome: model.NonEnforcing, What: "write hooks", Known: "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"}}},
		{Name: "filesystem/workspace/tmpdir", Outcome: model.AllowedBlocked, Breaches: []model.Breach{
			{Outcome: model.AllowedBlocked, What: "write /tmp/claude refused", Known: "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*"}}},
	}
	for _, c := range []struct {
		name string
		last func(r *model.Record)
		want []string
		not  []string
	}{
		{"known findings only", nil, []string{
			"srt 0.0.83 on local as sandcheck (unprivileged): nothing new in 20 trials; 1 known fail-open finding(s) remain (filesystem/protected/git-hooks-new-repo), 1 known fail-closed (filesystem/workspace/tmpdir)",
			"  correct                           20      100.0%",
		}, []string{"non-enforcing  ", "NEW"}},
		{"egress no finding accounts for", func(r *model.Record) { r.Egress = []string{"denied dns A q.denied.sandcheck.test"} }, []string{
			"srt 0.0.83 on local as sandcheck (unprivileged): NEW: FAIL-OPEN in 1 of 20 trials; 1 known fail-open",
			"  non-enforcing                     1       5.0%",
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, _ := aggregate.New(aggregate.Options{})
			for i := range 20 {
				r := model.Record{Cell: cell, Trial: i, Outcome: model.NonEnforcing, Scenarios: known}
				if i == 0 {
					r.HostFP = json.RawMessage(`{"sandbox":"@anthropic-ai/sandbox-runtime@0.0.83"}`)
				}
				if i == 19 && c.last != nil {
					c.last(&r)
				}
				a.Add(r)
			}
			var b bytes.Buffer
			Observed(&b, a.Report(), []model.Cell{cell})
			out := b.String()
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("output holds %q:\n%s", n, out)
				}
			}
		})
	}
}

// Two targets on one host as one user each head their lines with their own sandbox's version:
// the host's fingerprint names the sandbox, so it is kept per target when targets share a host
// (codex's cell read "codex 2.1.215", Claude Code's version, when both ran in one run).
func TestHeadlineVersionPerTargetOnOneHost(t *testing.T) {
	a, _ := aggregate.New(aggregate.Options{})
	var cells []model.Cell
	for target, sandbox := range map[string]string{"claude-code": "@anthropic-ai/claude-code@2.1.215", "codex": "@openai/codex@0.171.0"} {
		cell := model.Cell{ID: target, Target: target, Host: "local", User: model.UserUnprivileged}
		cells = append(cells, cell)
		a.Add(model.Record{Cell: cell, Outcome: model.Correct, HostFP: json.RawMessage(`{"sandbox":"` + sandbox + `"}`),
			Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}}})
	}
	var b bytes.Buffer
	Observed(&b, a.Report(), cells)
	for _, w := range []string{"codex 0.171.0 on local", "claude-code 2.1.215 on local"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, b.String())
		}
	}
}
