package suites

import (
	"slices"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
)

// Each family declares its aggregates with their ids; with every family linked, the known
// findings of every target load, and none is keyed to an aggregate (it would hide every new
// failure of the checks inside).
func TestFamiliesDeclareTheirAggregates(t *testing.T) {
	got := knownfindings.Aggregates()
	for _, want := range []string{"network/seed", "network/enforcing", "network/proxy-alive", "network/allowed-reachable",
		"filesystem/isolation", "claude-settings/trust/trusted/filesystem", "claude-settings/trust/untrusted/filesystem",
		"claude-settings/trust/fresh/filesystem"} {
		if !slices.Contains(got, want) {
			t.Errorf("no family declares %s an aggregate (declared: %v)", want, got)
		}
	}
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range set {
		for _, f := range l.Findings {
			if knownfindings.IsAggregate(f.Scenario) {
				t.Errorf("%s (%s) is keyed to the aggregate %s", f.ID, f.Pos, f.Scenario)
			}
		}
	}
}
