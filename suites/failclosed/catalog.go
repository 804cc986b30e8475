package failclosed

import (
	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/suites/catalog"
)

// family is the family's label, on its every spec.
const family = "failclosed"

// conditions are the faults that take enforcement away (scope failclosed): one spec each.
func conditions() []*faults.Fault {
	var out []*faults.Fault
	for _, f := range faults.All() {
		if f.Scope == faults.ScopeFailClosed {
			out = append(out, f)
		}
	}
	return out
}

func scenario(f *faults.Fault) string { return family + "/" + f.Name }
func spec(f *faults.Fault) string     { return "refuses to run when " + f.Summary }
func label(f *faults.Fault) string    { return family + "-" + f.Name }

// KnownBads are the family's known-bads: a stand-in for a sandbox that runs silently with a dead
// proxy fails every condition, in every trial (e2e TestScenarioFaultsAreFlagged).
var KnownBads = func() []catalog.Flags {
	f := catalog.Flags{KnownBad: catalog.KnownBad{Fault: "degraded-no-proxy", Target: "srt"}}
	for _, c := range conditions() {
		f.Scenarios = append(f.Scenarios, scenario(c))
	}
	return []catalog.Flags{f}
}()

// Catalogue lists the family's scenarios, from the conditions its specs are built from: each
// condition is a fault the scenario injects itself, which a target must offer the seams of.
func Catalogue() []catalog.Scenario {
	var out []catalog.Scenario
	for _, f := range conditions() {
		out = append(out, catalog.Scenario{ID: scenario(f), Labels: []string{family, label(f)}, Spec: spec(f), What: spec(f),
			Needs: catalog.Needs{Seams: f.Seams}, Condition: f.Name, KnownBads: catalog.Of(scenario(f), KnownBads)})
	}
	return out
}
