// Package network is the network egress family: the seed's properties per channel (the allowed
// host reachable, the denied one refused, the proxy alive) and each channel as a scenario of its
// own, judged from what the fixture servers logged. Its trial and classifier are the shared
// network plumbing (suites/harness/network, suites/classify), which the untrusted, fail-closed,
// concurrency and claude-settings families drive too.
//
// Sandbox starts (journal: families.network.sessions): one per trial. Every channel's requests
// share the session: none changes what another's request meets (each is its own connection, its
// own path on the fixture host), and the seed's own repro runs its requests in one session too.
package network

import (
	"fmt"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	nettrial "github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
	"github.com/sandcheck/sandcheck/targets"
)

// derived narrows a trial's outcome to one property: the property's own failure outcome when the
// trial showed it, outcomes that prevent judging anything (harness trouble, timeouts, a sandbox
// that refused to start) passed through, and correct otherwise. The breaches are the channels
// that showed the property's failure.
func derived(r classify.Result, bad model.Outcome, h verdict.Hosts) (model.Outcome, string, []model.Breach) {
	bs := verdict.NetworkBreaches(r, bad, h)
	switch r.Outcome {
	case bad, model.HarnessError, model.Timeout, model.SandboxFailed:
		return r.Outcome, r.Hint, bs
	}
	if len(bs) > 0 {
		return bad, bs[0].What, bs
	}
	// A trial cut short by a worse finding (non-enforcing, then a timeout) leaves some channels
	// unjudged: the property cannot be vouched for on them, so it is never correct.
	for _, ch := range sortedChannels(r) {
		switch c := r.Channels[ch]; c.Outcome {
		case model.HarnessError, model.Timeout, model.SandboxFailed:
			return c.Outcome, ch + ": " + c.Hint, nil
		}
	}
	return model.Correct, "", nil
}

// sortedChannels lists a result's channels in a stable order.
func sortedChannels(r classify.Result) []string {
	chs := make([]string, 0, len(r.Channels))
	for ch := range r.Channels {
		chs = append(chs, ch)
	}
	sort.Strings(chs)
	return chs
}

// The family's aggregates: each sums up the channels (network/channel/CHANNEL), so no known
// finding is keyed to one of them.
var (
	seed             = aggregate("network/seed")
	proxyAlive       = aggregate("network/proxy-alive")
	enforcing        = aggregate("network/enforcing")
	allowedReachable = aggregate("network/allowed-reachable")
)

func aggregate(name string) string {
	return knownfindings.DeclareAggregate(name, "the network channels (network/channel/CHANNEL)")
}

var _ = Describe("network egress", Ordered, ContinueOnFailure, Label(family), func() {
	var nt *nettrial.Trial
	var target targets.Target
	var on knownfindings.Subject
	var hosts verdict.Hosts

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		target, err = harness.NewTarget(cfg)
		Expect(err).NotTo(HaveOccurred(), "target")
		nt, err = nettrial.Run(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "network trial setup")
		specreport.AttachEvidence(nt)
		on = judge.Subject(nt.Target, nt.TargetVersion, nt.Fault)
		hosts = verdict.Hosts{Allowed: nt.Allowed.Name, Denied: nt.Denied.Name}
	})

	// judged is one of the seed's properties, judged over every channel (an aggregate); the seed
	// itself is every channel's outcome as it is.
	judged := func(p property) model.Scenario {
		if p.bad == "" {
			r := nt.Result
			return model.Scenario{Name: p.name, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint,
				Breaches: verdict.NetworkBreaches(r, "", hosts)}
		}
		o, h, bs := derived(nt.Result, p.bad, hosts)
		return model.Scenario{Name: p.name, Outcome: o, Pass: o == model.Correct, Hint: h, Breaches: bs}
	}

	for _, p := range properties {
		It(p.spec, Label(p.labels...), func() {
			if why := p.needs.Lacks(target); why != "" {
				judge.NotApplicable(p.name, why+p.notApplicable)
			}
			judge.Expect(on, judged(p))
		})
	}

	for _, ch := range model.AllChannels {
		name := verdict.ChannelScenario(ch)
		It(channelSpec(ch), Label(channelLabels(ch)...), func() {
			c, ok := nt.Result.Channels[ch]
			if !ok {
				// The whole trial failed before channels could be judged: report that.
				r := nt.Result
				judge.Expect(on, model.Scenario{Name: name, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint})
				return
			}
			if why := channelNeeds(ch).Lacks(target); why != "" && c.Outcome != model.NonEnforcing {
				judge.NotApplicable(name, fmt.Sprintf("%s: no proxy to go through (the channel saw %s)", why, c.Outcome))
			}
			if c.Outcome == model.NotApplicable {
				judge.NotApplicable(name, c.Hint)
			}
			j := model.Scenario{Name: name, Outcome: c.Outcome, Pass: c.Outcome == model.Correct, Hint: c.Hint}
			if !j.Pass {
				j.Breaches = []model.Breach{verdict.ChannelBreach(c, hosts)}
			}
			judge.Expect(on, j)
		})
	}
})
