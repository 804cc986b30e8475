package concurrency

import (
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/catalog"
)

// family is the family's label, on its every spec.
const family = "concurrency"

// mode is whether the sessions share one workspace.
type mode string

func modeOf(shared bool) mode {
	if shared {
		return "shared-workspace"
	}
	return "separate-workspaces"
}

func (m mode) scenario(k int) string { return fmt.Sprintf("%s/%s/k%d", family, m, k) }
func (m mode) spec(k int) string {
	return fmt.Sprintf("keeps %d sessions started together correct (%s)", k, m)
}
func (m mode) label() string { return family + "-" + string(m) }

// KnownBads are the family's known-bads: srt sharing the host's network lets each session's
// direct connection out (e2e TestConcurrency). Nothing is declared for the shared workspace.
var KnownBads = []catalog.Flags{
	{KnownBad: catalog.KnownBad{Fault: "netns-shared", Target: "srt", Expect: model.NonEnforcing},
		Scenarios: []string{modeOf(false).scenario(4)}},
}

// Catalogue lists the family's scenarios, with as many sessions as the specs start
// (SANDCHECK_CONCURRENCY, default 4: the ids carry it).
func Catalogue() []catalog.Scenario {
	k := concurrencyK()
	var out []catalog.Scenario
	for _, shared := range []bool{false, true} {
		m := modeOf(shared)
		out = append(out, catalog.Scenario{ID: m.scenario(k), Labels: []string{family, m.label()}, Spec: m.spec(k), What: m.spec(k) +
			": each session through its own proxy, the workspace as it was once all have ended", KnownBads: catalog.Of(m.scenario(k), KnownBads)})
	}
	return out
}
