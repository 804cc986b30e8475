package untrusted

import (
	"fmt"

	"github.com/sandcheck/sandcheck/suites/catalog"
)

// family is the family's label, on its every spec.
const family = "untrusted"

func (c condition) scenario() string { return family + "/" + c.name }
func (c condition) spec() string     { return fmt.Sprintf("enforces or fails loudly when %s", c.what) }
func (c condition) label() string    { return family + "-" + c.name }

// KnownBads are the family's known-bads: a stand-in for a sandbox that runs silently with a dead
// proxy fails every condition, in every trial (e2e TestScenarioFaultsAreFlagged).
var KnownBads = func() []catalog.Flags {
	f := catalog.Flags{KnownBad: catalog.KnownBad{Fault: "degraded-no-proxy", Target: "srt"}}
	for _, c := range untrustedConditions {
		f.Scenarios = append(f.Scenarios, c.scenario())
	}
	return []catalog.Flags{f}
}()

// Catalogue lists the family's scenarios, from the conditions its specs are built from.
func Catalogue() []catalog.Scenario {
	var out []catalog.Scenario
	for _, c := range untrustedConditions {
		out = append(out, catalog.Scenario{ID: c.scenario(), Labels: []string{family, c.label()}, Spec: c.spec(), What: c.spec(),
			Needs: catalog.Capability(untrustedNeeds(c.name)), KnownBads: catalog.Of(c.scenario(), KnownBads)})
	}
	return out
}
