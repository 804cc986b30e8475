// Package suites links sandcheck's Ginkgo specs, one folder per scenario family (their verdicts
// through judge), into whatever imports it: the sandcheck binary
// and this package's own test, which runs them all. They run against the target named by
// SANDCHECK_TARGET (default srt) under `go test`, `ginkgo` and `sandcheck trial`.
package suites

import (
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/bypass"         // bypass classes (label bypass)
	"github.com/sandcheck/sandcheck/suites/catalog"        // what the families' specs check, without running them
	"github.com/sandcheck/sandcheck/suites/claudesettings" // Claude Code's own settings (label claude-settings)
	"github.com/sandcheck/sandcheck/suites/concurrency"    // concurrent sessions (label concurrency)
	"github.com/sandcheck/sandcheck/suites/failclosed"     // fail-closed honesty (label failclosed)
	"github.com/sandcheck/sandcheck/suites/filesystem"     // filesystem isolation (label filesystem)
	"github.com/sandcheck/sandcheck/suites/network"        // network egress, the seed's properties (label network)
	"github.com/sandcheck/sandcheck/suites/untrusted"      // untrusted or degraded configuration (label untrusted)
)

// Catalogue lists every family's scenarios, family by family (the network's, the seed's
// properties, first), with what each family's list leaves out filled in: aggregates and the
// known findings every linked target pins to each.
func Catalogue() ([]catalog.Scenario, error) {
	set, err := knownfindings.Load()
	if err != nil {
		return nil, err
	}
	var all []catalog.Scenario
	for _, family := range [][]catalog.Scenario{network.Catalogue(), filesystem.Catalogue(), untrusted.Catalogue(),
		failclosed.Catalogue(), concurrency.Catalogue(), claudesettings.Catalogue(), bypass.Catalogue()} {
		all = append(all, family...)
	}
	return catalog.Complete(all, set), nil
}
