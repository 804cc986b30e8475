package filesystem

import (
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/catalog"
	fstrial "github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// family is the family's label, on its every spec.
const family = "filesystem"

const isolationSpec = "confines writes to the workspace and hides the secret (overall)"

var isolationLabels = []string{"seed"}

// scenarios names checks as their scenarios.
func scenarios(checks ...string) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = verdict.FSScenario(c)
	}
	return out
}

// KnownBads are the family's known-bads, each a fault injected into the real srt and the checks
// it must flag in every trial (e2e TestScenarioFaultsAreFlagged runs them). /etc is not
// writable by an unprivileged user even unsandboxed: there the escape shows as root only.
var KnownBads = []catalog.Flags{
	{KnownBad: catalog.KnownBad{Fault: "fs-rw-root", Target: "srt", Expect: model.NonEnforcing},
		Scenarios: scenarios("outside/tmp", "outside/home", "outside/parent", "escape/symlink", "escape/dotdot", "escape/proc-root")},
	{KnownBad: catalog.KnownBad{Fault: "fs-rw-root", Target: "srt", User: model.UserRoot, Expect: model.NonEnforcing},
		Scenarios: scenarios("outside/etc")},
	{KnownBad: catalog.KnownBad{Fault: "fs-drop-deny-read", Target: "srt", Expect: model.NonEnforcing},
		Scenarios: scenarios("secret/read", "secret/via-symlink", "secret/proc-root")},
}

// Catalogue lists the family's scenarios, from the checks its specs are built from.
func Catalogue() []catalog.Scenario {
	out := []catalog.Scenario{{ID: isolation, Labels: append([]string{family}, isolationLabels...), Spec: isolationSpec,
		What:      "every filesystem check holds in one trial: writes confined to the workspace, the secret unreadable, the protected files unchanged",
		KnownBads: catalog.Of(isolation, KnownBads)}}
	for _, c := range fstrial.Checks() {
		id := verdict.FSScenario(c.Name)
		out = append(out, catalog.Scenario{ID: id, Labels: []string{family, checkLabel(c.Name)}, Spec: c.Name, What: c.What,
			Needs: catalog.Capability(c.Needs...), KnownBads: catalog.Of(id, KnownBads)})
	}
	return out
}
