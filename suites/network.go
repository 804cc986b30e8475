// Package suites holds sandcheck's Ginkgo specs, one file per concern. They run against the
// target named by SANDCHECK_TARGET (default srt) under `go test`, `ginkgo` and `sandcheck trial`.
package suites

import (
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets"
)

// verdict attaches a spec's outcome, then asserts the healthy expectation. Attaching first means
// a failing spec still tells the runner what it saw.
func verdict(name string, o classify.Outcome, hint string) {
	expectVerdict(name, o, o == classify.Correct, hint)
}

// expectVerdict attaches an outcome judged against a scenario's own expectation, then asserts
// it. A failure that is a documented known finding of the target (knownfindings/) is reported as
// such and skipped rather than failed, unless SANDCHECK_STRICT=1: the journal still records the
// real outcome, and the e2e tests pin the list.
func expectVerdict(name string, o classify.Outcome, pass bool, hint string) {
	specreport.Attach(specreport.Verdict{Name: name, Outcome: o, Pass: pass, Hint: hint})
	if !pass && os.Getenv("SANDCHECK_STRICT") != "1" {
		if f, ok := knownFinding(name); ok && f.Matches(o) {
			Skip(fmt.Sprintf("known finding of %s: %s (%s)", f.Target, o, f.Note))
		}
	}
	Expect(pass).To(BeTrue(), "%s: %s: %s", name, o, hint)
}

// knownFinding looks a scenario up in the known findings of the target under test.
func knownFinding(scenario string) (struct {
	knownfindings.Finding
	Target string
}, bool) {
	var out struct {
		knownfindings.Finding
		Target string
	}
	cfg, err := harness.FromEnv()
	if err != nil || cfg.Target != "srt" {
		return out, false
	}
	l, err := knownfindings.SRT()
	if err != nil {
		return out, false
	}
	f, ok := l.Lookup(scenario)
	out.Finding, out.Target = f, l.Version
	return out, ok
}

// notApplicable reports a spec the target cannot be judged on, with the reason, and skips it:
// recorded as not-applicable (never silently skipped, never a pass of the sandbox).
func notApplicable(name, reason string) {
	specreport.Attach(specreport.Verdict{Name: name, Outcome: classify.NotApplicable, Pass: true, Hint: reason})
	Skip("not applicable: " + reason)
}

// derived narrows a trial's outcome to one property: the property's own failure outcome when the
// trial showed it, outcomes that prevent judging anything (harness trouble, timeouts, a sandbox
// that refused to start) passed through, and correct otherwise.
func derived(r classify.Result, bad classify.Outcome) (classify.Outcome, string) {
	switch r.Outcome {
	case bad, classify.HarnessError, classify.Timeout, classify.SandboxFailed:
		return r.Outcome, r.Hint
	}
	for _, c := range r.Channels {
		if c.Outcome == bad {
			return bad, c.Channel + ": " + c.Hint
		}
	}
	return classify.Correct, ""
}

var _ = Describe("network egress", Ordered, ContinueOnFailure, Label("network"), func() {
	var nt *harness.NetworkTrial
	var target targets.Target

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.FromEnv()
		Expect(err).NotTo(HaveOccurred())
		target, err = harness.NewTarget(cfg)
		Expect(err).NotTo(HaveOccurred(), "target")
		nt, err = harness.RunNetwork(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "network trial setup")
		specreport.AttachEvidence(nt)
	})

	It("allows the allowed host and blocks the denied one (the seed's repro)", Label("seed"), func() {
		verdict("network/seed", nt.Result.Outcome, nt.Result.Hint)
	})

	It("keeps its proxy alive (seed outcome 1: proxy dead)", Label("seed", "availability"), func() {
		if !targets.Has(target, targets.CapProxyAllowList) {
			notApplicable("network/proxy-alive", fmt.Sprintf("%s has no proxy (it does not claim %s)", target.Name(), targets.CapProxyAllowList))
		}
		o, h := derived(nt.Result, classify.ProxyDead)
		verdict("network/proxy-alive", o, h)
	})

	It("enforces the allow-list on every channel (seed outcome 2: proxy up but not enforcing)", Label("seed", "security"), func() {
		o, h := derived(nt.Result, classify.NonEnforcing)
		verdict("network/enforcing", o, h)
	})

	It("lets the allowed host through", Label("policy"), func() {
		if targets.DenyAll(target) {
			notApplicable("network/allowed-reachable", target.Name()+" is a deny-all sandbox: the allowed host must be blocked too (see network/enforcing)")
		}
		o, h := derived(nt.Result, classify.AllowedBlocked)
		verdict("network/allowed-reachable", o, h)
	})

	for _, ch := range probe.AllChannels {
		It(fmt.Sprintf("over the %s channel", ch), Label("channel", "channel-"+ch), func() {
			c, ok := nt.Result.Channels[ch]
			if !ok {
				// The whole trial failed before channels could be judged: report that.
				verdict("network/channel/"+ch, nt.Result.Outcome, nt.Result.Hint)
				return
			}
			if targets.DenyAll(target) && ch != probe.ChanDirect && ch != probe.ChanDNS && c.Outcome != classify.NonEnforcing {
				notApplicable("network/channel/"+ch, fmt.Sprintf("%s is a deny-all sandbox: no proxy to go through (the channel saw %s)", target.Name(), c.Outcome))
			}
			if c.Outcome == classify.NotApplicable {
				specreport.Attach(specreport.Verdict{Name: "network/channel/" + ch, Outcome: c.Outcome, Pass: true, Hint: c.Hint})
				Skip("not applicable: " + c.Hint)
			}
			verdict("network/channel/"+ch, c.Outcome, c.Hint)
		})
	}
})
