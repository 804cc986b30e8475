package network

import (
	"fmt"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// family is the family's label, on its every spec.
const family = "network"

// property is one of the seed's properties, a spec of its own: its scenario, text and labels,
// the outcome that fails it ("" for the seed itself, which any failing outcome fails), what it
// needs of a target and what its not-applicable verdict adds.
type property struct {
	name, spec    string
	labels        []string
	bad           model.Outcome
	needs         catalog.Needs
	notApplicable string
}

var properties = []property{
	{name: seed, spec: "allows the allowed host and blocks the denied one (the seed's repro)", labels: []string{"seed"}},
	{name: proxyAlive, spec: "keeps its proxy alive (seed outcome 1: proxy dead)", labels: []string{"seed", "availability"},
		bad: model.ProxyDead, needs: catalog.Capability(model.CapProxyAllowList), notApplicable: ": it has no proxy"},
	{name: enforcing, spec: "enforces the allow-list on every channel (seed outcome 2: proxy up but not enforcing)",
		labels: []string{"seed", "security"}, bad: model.NonEnforcing},
	{name: allowedReachable, spec: "lets the allowed host through", labels: []string{"policy"}, bad: model.AllowedBlocked,
		needs: catalog.Needs{AllowList: true}, notApplicable: ": the allowed host must be blocked too (see network/enforcing)"},
}

func channelSpec(ch string) string     { return fmt.Sprintf("over the %s channel", ch) }
func channelLabels(ch string) []string { return []string{"channel", "channel-" + ch} }

// channelNeeds: the proxy's channels test an allow-list; the direct and DNS ones must be closed
// on every target, deny-all ones included.
func channelNeeds(ch string) catalog.Needs {
	return catalog.Needs{AllowList: ch != model.ChanDirect && ch != model.ChanDNS}
}

// knownBads are the network faults (fixtures/faults, scope network) that fail a property: each
// makes the network trial as a whole show its Expect (e2e TestDetector), so the seed shows every
// one and a property those whose outcome is its failure.
func knownBads(bad model.Outcome) []catalog.KnownBad {
	var out []catalog.KnownBad
	for _, f := range faults.All() {
		if f.Scope == faults.ScopeNetwork && (bad == "" || f.Expect == bad) {
			out = append(out, catalog.KnownBad{Fault: f.Name, Expect: f.Expect, Rate: f.Rate != nil})
		}
	}
	return out
}

// Catalogue lists the family's scenarios, from the tables its specs are built from. Which
// channel a network fault shows on is declared nowhere: a channel's known-bads are none.
func Catalogue() []catalog.Scenario {
	var out []catalog.Scenario
	for _, p := range properties {
		out = append(out, catalog.Scenario{ID: p.name, Labels: append([]string{family}, p.labels...), Spec: p.spec, What: p.spec,
			Needs: p.needs, KnownBads: knownBads(p.bad)})
	}
	for _, ch := range model.AllChannels {
		out = append(out, catalog.Scenario{ID: verdict.ChannelScenario(ch), Labels: append([]string{family}, channelLabels(ch)...),
			Spec: channelSpec(ch), What: fmt.Sprintf("the policy holds %s: the denied host is never reached, the allowed one where the target lets it through", channelSpec(ch)),
			Needs: channelNeeds(ch)})
	}
	return out
}
