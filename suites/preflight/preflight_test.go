//go:build linux

package preflight

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
)

// A fail-open known finding fails preflight unless accepted, and is then named; a fail-closed
// one is a warning either way.
func TestWriteKnown(t *testing.T) {
	on := knownfindings.Subject{Target: "srt", Version: "@anthropic-ai/sandbox-runtime@0.0.83"}
	open := knownfindings.Match{
		Breach:  model.Breach{Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit"},
		Finding: knownfindings.Finding{ID: "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit", Note: "hooks in a new repo"},
	}
	closed := knownfindings.Match{
		Breach:  model.Breach{Outcome: model.AllowedBlocked, What: "write /tmp/claude/sandcheck-fs-* refused"},
		Finding: knownfindings.Finding{ID: "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*", Note: "no /tmp/claude"},
	}
	cases := []struct {
		ms     []knownfindings.Match
		accept bool
		ok     bool
		say    []string
	}{
		{[]knownfindings.Match{closed, open}, false, false, []string{"warning: known finding " + closed.Finding.ID,
			"FAIL known finding " + open.Finding.ID + " (fail-open, non-enforcing): write $WORKSPACE/newrepo/.git/hooks/pre-commit: hooks in a new repo",
			"pass --accept-known"}},
		{[]knownfindings.Match{closed, open}, true, true, []string{"warning: known finding " + closed.Finding.ID,
			"accepted known finding " + open.Finding.ID + " (fail-open, non-enforcing): write $WORKSPACE/newrepo/.git/hooks/pre-commit: hooks in a new repo"}},
		{[]knownfindings.Match{closed}, false, true, []string{"warning: known finding " + closed.Finding.ID}},
	}
	for i, c := range cases {
		var b bytes.Buffer
		if ok := WriteKnown(&b, c.ms, Accept(c.accept), on); ok != c.ok {
			t.Errorf("case %d: ok %v, want %v\n%s", i, ok, c.ok, b.String())
		}
		for _, s := range c.say {
			if !strings.Contains(b.String(), s) {
				t.Errorf("case %d: output lacks %q:\n%s", i, s, b.String())
			}
		}
		if c.ok && strings.Contains(b.String(), "FAIL") {
			t.Errorf("case %d: FAIL printed although let through:\n%s", i, b.String())
		}
	}
}

// Preflight decides by the rule every tool shares: egress no verdict accounts for fails it, even
// beside known findings it accepts; known findings alone pass with --accept-known.
func TestFailure(t *testing.T) {
	hooks := model.Scenario{Name: "filesystem/isolation", Aggregate: true, Outcome: model.NonEnforcing, Breaches: []model.Breach{
		{Scenario: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, What: "write hooks", Known: "srt:hooks"}}}
	seed := model.Scenario{Name: "network/seed", Aggregate: true, Outcome: model.Correct, Pass: true}
	known := &Result{Trial: model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{seed, hooks}}}
	if why := known.Failure(Accept(true)); why != "" {
		t.Errorf("known findings accepted: %q", why)
	}
	if why := known.Failure(Accept(false)); why == "" {
		t.Error("a known fail-open finding passed without --accept-known")
	}
	egress := &Result{Trial: model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{seed, hooks},
		Egress: []string{"denied dns A q-1.denied.sandcheck.test"}}}
	if why := egress.Failure(Accept(true)); !strings.Contains(why, "egress no verdict accounts for: denied dns") {
		t.Errorf("egress beside accepted findings: %q", why)
	}
}
