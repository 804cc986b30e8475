package e2e

import (
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// quickTargets are make test-quick's targets, and each one's fail-open known-bad: a fault, or
// target settings (Claude Code's --dangerously-skip-permissions, the seed's outcome 2).
var quickTargets = []struct{ target, fault, settings string }{
	{"srt", "open-proxy", ""},
	{"bwrap", "netns-shared", ""},
	{"firejail", "netns-shared", ""},
	{"codex", "netns-shared", ""},
	{"claude-code", "", `{"permission_mode":"bypass"}`},
}

// TestQuick (make test-quick, only under -short): every target's network scenario (network/seed,
// the aggregate), one trial, healthy (it must pass) and under its fail-open known-bad (it must be
// flagged non-enforcing). A
// smoke test for the edit loop, not coverage: make test's e2e tier runs the same cells many times
// over.
func TestQuick(t *testing.T) {
	if !testing.Short() {
		skip.Tier(t, "make test-quick's cells (-short); the full e2e tier covers them")
	}
	requireSandbox(t)
	check := func(t *testing.T, args []string, want model.Outcome) {
		t.Helper()
		rep := runReportEnv(t, []string{"SANDCHECK_NPM_OFFLINE=1"}, append([]string{"-n", "1", "-j", "2", "--label-filter", "network && seed"}, args...)...)
		seeds := 0
		for _, c := range rep.Cells {
			if c.Scenario != "network/seed" { // the aggregate: its parts differ by target
				continue
			}
			seeds++
			if c.Trials == 0 || c.Outcomes[string(want)] != c.Trials {
				t.Errorf("%s %s %s: %v, want %s%s", c.Target, c.Fault, c.Scenario, c.Outcomes, want, why(c))
			}
		}
		if seeds == 0 {
			t.Fatal("no network/seed row")
		}
	}
	t.Run("healthy", func(t *testing.T) {
		var args []string
		for _, q := range quickTargets {
			args = append(args, "--target", q.target)
		}
		check(t, args, model.Correct)
	})
	for _, q := range quickTargets {
		t.Run(q.target+"/fail-open", func(t *testing.T) {
			args := []string{"--target", q.target}
			if q.fault != "" {
				args = append(args, "--fault", q.fault)
			}
			if q.settings != "" {
				args = append(args, "--target-settings", q.settings)
			}
			check(t, args, model.NonEnforcing)
		})
	}
}
