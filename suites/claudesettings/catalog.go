package claudesettings

import (
	"strings"

	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// family is the family's label, on its every spec.
const family = "claude-settings"

// needs: every scenario is a setting of Claude Code's own; any other target reports it
// not-applicable.
var needs = catalog.Needs{Target: claudecode.Name}

var seedReproLabels = []string{family, "claude-seed-repro", "seed"}

const seedReproSpec = "runs the seed's two curls as its reporter did, and reads like its Observed section"

func (c claudeCase) label() string { return "claude-" + strings.SplitN(c.group, "/", 2)[0] }

// caseLabel selects the one case: claude-GROUP-NAME, slashes and pluses as dashes
// (claude-permissions-bypass-strict-allowlist).
func (c claudeCase) caseLabel() string {
	return "claude-" + strings.NewReplacer("/", "-", "+", "-").Replace(c.group+"/"+c.name)
}

// what says what a case checks, by what its configuration must do.
func (c claudeCase) what() string {
	switch {
	case c.filesystem:
		return "with " + c.config + ", every filesystem check holds"
	case c.judge == notSandboxed:
		return c.config + " turns the sandbox off: reported as not sandboxed by configuration, never as correct"
	case c.judge == mayRunLoudly:
		return "with " + c.config + ", Claude Code enforces the policy, refuses to run the command, or runs it unsandboxed with a warning (never silently)"
	}
	return "with " + c.config + ", Claude Code enforces the policy or refuses to run the command, loudly"
}

// Catalogue lists the family's scenarios, from the cases its specs are built from. No known-bad
// is declared: what the real Claude Code fails is pinned as its known findings.
func Catalogue() []catalog.Scenario {
	out := []catalog.Scenario{{ID: seedRepro, Labels: seedReproLabels, Spec: seedReproSpec, Needs: needs,
		What: "the seed's settings, invocation and two curls through the real Claude Code give the seed's outcome 3 (correct): the allowed host answers, the denied one is blocked"}}
	for _, c := range claudeCases() {
		out = append(out, catalog.Scenario{ID: c.scenario(), Labels: []string{family, c.label(), c.caseLabel()}, Spec: c.config, What: c.what(), Needs: needs})
	}
	return out
}
