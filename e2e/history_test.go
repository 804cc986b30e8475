package e2e

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// TestBypassHistory (issue 28): every bypass case on every srt release from 0.0.25 to 0.0.83,
// every Codex release from 0.131.0 to 0.171.0 and Claude Code's releases around its fixes
// (matrix/examples/bypass-history.yaml, what `make bypass-history` tables in
// docs/results/bypass-history.md), as the unprivileged user. Every case is decided on every
// release: correct, non-enforcing, or not-applicable with its reason, never a refusal of the
// settings sandcheck wrote or a control that failed (the one exception is absent-list's loud
// refusal to start, which its spec counts as a pass). And each published escape shows on its
// last open release in every trial and on its fixing release in none: srt's four, and Codex's
// proxy that was not the only way out (0.131.0 to 0.138.0: the command's own UDP reaches the denied
// host; 0.139.0 closed it), and Claude Code's three fixes. Long tier: 57 srt, 68 Codex and 8
// Claude Code releases, about 12 minutes.
func TestBypassHistory(t *testing.T) {
	requireSandbox(t)
	skip.UnlessLong(t, "runs 133 releases of srt, Codex and Claude Code")
	rep := runReport(t, "--matrix", "../matrix/examples/bypass-history.yaml")
	byVersion := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		byVersion[c.Target+"@"+c.Version+"|"+c.Scenario] = c
		for o, n := range c.Outcomes {
			switch model.Outcome(o) {
			case model.Correct, model.NonEnforcing:
			case model.NotApplicable:
				if ex, ok := c.Examples[o]; !ok || ex.Hint == "" {
					t.Errorf("%s %s %s: not-applicable %d/%d without its reason", c.Target, c.Version, c.Scenario, n, c.Trials)
				}
			case model.SandboxFailed:
				if c.Scenario == "bypass/policy-semantics/absent-list" && c.Failures == 0 {
					continue // a loud refusal to start passes this case
				}
				if c.Target == "srt" && c.Version == "0.0.45" && strings.HasPrefix(c.Scenario, "bypass/nesting/") {
					// Measured: 0.0.45 does not start in its weaker mode for nested use (its
					// seccomp helper writes the /proc the mode leaves read-only); loud, 0.0.46 starts.
					continue
				}
				fallthrough
			default:
				t.Errorf("%s %s %s: %s in %d/%d trials: undecided%s", c.Target, c.Version, c.Scenario, o, n, c.Trials, why(c))
			}
		}
	}
	escapes := []struct{ target, scenario, open, fixed string }{
		{"codex", "bypass/other-egress/udp", "0.138.0", "0.139.0"},
		{"codex", "bypass/privilege/ptrace-helper", "0.147.0", "0.148.0"},
		{"srt", "bypass/privilege/ptrace-helper", "0.0.44", "0.0.45"},
		{"srt", "bypass/globs/existing", "0.0.34", "0.0.37"},
		{"srt", "bypass/setup/planted-file", "0.0.64", "0.0.65"},
		{"srt", "bypass/setup/planted-dir", "0.0.64", "0.0.65"},
		{"srt", "bypass/setup/planted-nested", "0.0.64", "0.0.65"},
		// Claude Code's, each found by a sweep of every fifth release and pinned by a bisect.
		{"claude-code", "bypass/fs-interplay/deny-read-parent-rename", "2.1.231", "2.1.232"},
		{"claude-code", "bypass/fs-interplay/protected-git-hooks-from-subdir", "2.1.274", "2.1.275"},
		{"claude-code", "bypass/fs-interplay/protected-git-config-from-subdir", "2.1.274", "2.1.275"},
		{"claude-code", "bypass/resolved-address/loopback", "2.1.283", "2.1.284"},
		{"claude-code", "bypass/resolved-address/metadata", "2.1.283", "2.1.284"},
		{"claude-code", "bypass/resolved-address/host-address", "2.1.283", "2.1.284"},
	}
	for _, e := range publishedEscapes {
		escapes = append(escapes, struct{ target, scenario, open, fixed string }{"srt", e.scenario, e.open, e.fixed})
	}
	for _, e := range escapes {
		open, fixed := byVersion[e.target+"@"+e.open+"|"+e.scenario], byVersion[e.target+"@"+e.fixed+"|"+e.scenario]
		if open.Trials == 0 || open.Outcomes[string(model.NonEnforcing)] != open.Trials {
			t.Errorf("%s on %s %s (the last open release): %v, want non-enforcing in every trial%s", e.scenario, e.target, e.open, open.Outcomes, why(open))
		}
		if fixed.Trials == 0 || fixed.Outcomes[string(model.Correct)] != fixed.Trials {
			t.Errorf("%s on %s %s (the fix): %v, want correct in every trial%s", e.scenario, e.target, e.fixed, fixed.Outcomes, why(fixed))
		}
	}
	t.Logf("%d version x case rows", len(rep.Cells))
}
