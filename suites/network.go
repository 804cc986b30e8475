// Package suites holds sandcheck's Ginkgo specs, one file per concern. They run against the
// target named by SANDCHECK_TARGET (default srt) under `go test`, `ginkgo` and `sandcheck trial`.
package suites

import (
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets"
)

// judgement is one spec's verdict: its outcome against the scenario's own expectation, what it
// breached (in the terms known findings are keyed by), and what it was observed on.
type judgement struct {
	name     string
	outcome  model.Outcome
	pass     bool
	hint     string
	breaches []knownfindings.Breach
	on       knownfindings.Subject
}

// subject is what a trial ran against, from its evidence: the target, its version as the adapter
// reports it, and the configured fault (a scenario's own faults are part of the scenario); the
// user is the configured one (SANDCHECK_USER, as harness.FromEnv reads it).
func subject(target, version, fault string) knownfindings.Subject {
	return knownfindings.Subject{Target: target, Version: version, Fault: fault, User: users.Normalize(config.Get().User)}
}

// expect attaches a spec's verdict, then asserts it. Attaching first means a failing spec still
// tells the runner what it saw. A failure is skipped as a known finding of the target only when
// every breach it shows is covered by a finding (targets/NAME/knownfindings.yaml) for this target, version and
// fault, and not under SANDCHECK_STRICT=1; the journal records the real outcome either way, with
// the breaches and the findings that cover them.
func expect(j judgement) {
	for _, b := range j.breaches {
		// A breach keyed to another scenario makes this verdict an aggregate; knownfindings must
		// know it as one, or a finding could be keyed to it.
		if b.Scenario != j.name && !knownfindings.IsAggregate(j.name) {
			Fail(fmt.Sprintf("spec bug: %s sums up %s but is not among knownfindings' aggregates", j.name, b.Scenario))
		}
	}
	set, loadErr := knownfindings.Load()
	d := set.Decide(j.on, knownfindings.Verdict{Scenario: j.name, Outcome: j.outcome, Pass: j.pass, Hint: j.hint, Breaches: j.breaches})
	specreport.Attach(specreport.Verdict{Name: j.name, Outcome: j.outcome, Pass: j.pass, Hint: j.hint,
		Breaches: knownfindings.Words(d.Breaches), Known: d.Known, Unreproduced: d.Unreproduced})
	if j.pass {
		return
	}
	if d.Known != "" && !config.Get().Strict {
		Skip(fmt.Sprintf("known finding of %s: %s", j.on, matchedText(d.Matched)))
	}
	Fail(failureText(j, d, loadErr))
}

// matchedText names each covered breach with its finding and note.
func matchedText(ms []knownfindings.Match) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s [%s] (%s)", m.Breach.What, m.Finding.ID, m.Finding.Note))
	}
	return strings.Join(parts, "; ")
}

// failureText says why a spec fails, leading with the breaches no known finding covers.
func failureText(j judgement, d knownfindings.Decision, loadErr error) string {
	msg := fmt.Sprintf("%s: %s: %s", j.name, j.outcome, j.hint)
	if len(d.New) > 0 {
		msg += fmt.Sprintf("\nnot a known finding of %s: %s", j.on, strings.Join(knownfindings.Words(d.New), "; "))
	}
	if len(d.Matched) > 0 {
		verb := "also shows"
		if len(d.New) == 0 {
			verb = "shows (SANDCHECK_STRICT=1)"
		}
		msg += fmt.Sprintf("\n%s known findings: %s", verb, matchedText(d.Matched))
	}
	if loadErr != nil {
		msg += "\nknown findings unreadable: " + loadErr.Error()
	}
	return msg
}

// notApplicable reports a spec the target cannot be judged on, with the reason, and skips it:
// recorded as not-applicable (never silently skipped, never a pass of the sandbox).
func notApplicable(name, reason string) {
	specreport.Attach(specreport.Verdict{Name: name, Outcome: model.NotApplicable, Pass: true, Hint: reason})
	Skip("not applicable: " + reason)
}

// derived narrows a trial's outcome to one property: the property's own failure outcome when the
// trial showed it, outcomes that prevent judging anything (harness trouble, timeouts, a sandbox
// that refused to start) passed through, and correct otherwise. The breaches are the channels
// that showed the property's failure.
func derived(r classify.Result, bad model.Outcome, h knownfindings.Hosts) (model.Outcome, string, []knownfindings.Breach) {
	bs := knownfindings.NetworkBreaches(r, bad, h)
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

var _ = Describe("network egress", Ordered, ContinueOnFailure, Label("network"), func() {
	var nt *network.Trial
	var target targets.Target
	var on knownfindings.Subject
	var hosts knownfindings.Hosts

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.FromEnv()
		Expect(err).NotTo(HaveOccurred())
		target, err = harness.NewTarget(cfg)
		Expect(err).NotTo(HaveOccurred(), "target")
		nt, err = network.Run(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "network trial setup")
		specreport.AttachEvidence(nt)
		on = subject(nt.Target, nt.TargetVersion, nt.Fault)
		hosts = knownfindings.Hosts{Allowed: nt.Allowed.Name, Denied: nt.Denied.Name}
	})

	// property is one of the seed's properties, judged over every channel (an aggregate).
	property := func(name string, bad model.Outcome) {
		o, h, bs := derived(nt.Result, bad, hosts)
		expect(judgement{name: name, outcome: o, pass: o == model.Correct, hint: h, breaches: bs, on: on})
	}

	It("allows the allowed host and blocks the denied one (the seed's repro)", Label("seed"), func() {
		r := nt.Result
		expect(judgement{name: "network/seed", outcome: r.Outcome, pass: r.Outcome == model.Correct, hint: r.Hint,
			breaches: knownfindings.NetworkBreaches(r, "", hosts), on: on})
	})

	It("keeps its proxy alive (seed outcome 1: proxy dead)", Label("seed", "availability"), func() {
		if !targets.Has(target, model.CapProxyAllowList) {
			notApplicable("network/proxy-alive", fmt.Sprintf("%s has no proxy (it does not claim %s)", target.Name(), model.CapProxyAllowList))
		}
		property("network/proxy-alive", model.ProxyDead)
	})

	It("enforces the allow-list on every channel (seed outcome 2: proxy up but not enforcing)", Label("seed", "security"), func() {
		property("network/enforcing", model.NonEnforcing)
	})

	It("lets the allowed host through", Label("policy"), func() {
		if targets.DenyAll(target) {
			notApplicable("network/allowed-reachable", target.Name()+" is a deny-all sandbox: the allowed host must be blocked too (see network/enforcing)")
		}
		property("network/allowed-reachable", model.AllowedBlocked)
	})

	for _, ch := range model.AllChannels {
		name := knownfindings.ChannelScenario(ch)
		It(fmt.Sprintf("over the %s channel", ch), Label("channel", "channel-"+ch), func() {
			c, ok := nt.Result.Channels[ch]
			if !ok {
				// The whole trial failed before channels could be judged: report that.
				r := nt.Result
				expect(judgement{name: name, outcome: r.Outcome, pass: r.Outcome == model.Correct, hint: r.Hint, on: on})
				return
			}
			if targets.DenyAll(target) && ch != model.ChanDirect && ch != model.ChanDNS && c.Outcome != model.NonEnforcing {
				notApplicable(name, fmt.Sprintf("%s is a deny-all sandbox: no proxy to go through (the channel saw %s)", target.Name(), c.Outcome))
			}
			if c.Outcome == model.NotApplicable {
				specreport.Attach(specreport.Verdict{Name: name, Outcome: c.Outcome, Pass: true, Hint: c.Hint})
				Skip("not applicable: " + c.Hint)
			}
			j := judgement{name: name, outcome: c.Outcome, pass: c.Outcome == model.Correct, hint: c.Hint, on: on}
			if !j.pass {
				j.breaches = []knownfindings.Breach{knownfindings.ChannelBreach(c, hosts)}
			}
			expect(j)
		})
	}
})
