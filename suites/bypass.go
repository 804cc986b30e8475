package suites

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets"
)

// Bypass scenarios (issue 12): the ways allow-list sandboxes have actually been escaped, each a
// crafted request (probe.Raw) sent through the real sandbox and judged by what the fixture
// servers logged. A class runs one sandboxed session with all its cases at once; each case is
// a spec of its own, bypass/CLASS/CASE, labelled bypass and bypass-CLASS.

// bypassCase is one case of a class, declared before any fixture exists (Ginkgo builds its tree
// first); req builds the request once the fixture's addresses are known.
type bypassCase struct {
	id, what string
	req      func(f *nethost.Hosts) probe.Raw
	// allowedOK, control and policyRefusal: see classify.BypassCase.
	allowedOK, control, policyRefusal bool
	// needs is a capability the target must claim for the case to be judged.
	needs targets.Capability
	// passIfRefusedToStart: the sandbox refusing to start at all, loudly, also passes (a
	// configuration it documents as invalid).
	passIfRefusedToStart bool
}

// bypassClass is one class's trial: its cases, its fixture names, its policy.
type bypassClass struct {
	class, title string
	cases        []bypassCase
	names        []nethost.Name
	policy       func(f *nethost.Hosts) targets.Policy
	session      func(*targets.Session)
	tty          bool
	// proxyOnly: every case goes through the proxy; a target without one is not applicable
	// and no sandbox is started.
	proxyOnly bool
	needs     targets.Capability // the class as a whole (port rules...)
}

// controls are the requests proving each proxy channel works: the allowed host through it.
func controls() []bypassCase {
	var out []bypassCase
	for _, via := range []string{probe.ViaHTTP, probe.ViaConnect, probe.ViaSOCKS} {
		out = append(out, bypassCase{id: "control-" + via, control: true, allowedOK: true,
			req: func(f *nethost.Hosts) probe.Raw { return probe.Raw{Via: via, Host: f.Allowed.Name, Port: 80} }})
	}
	return out
}

// scenario is a case's scenario name.
func (c bypassClass) scenario(id string) string { return "bypass/" + c.class + "/" + id }

// describe declares the class's specs.
func (c bypassClass) describe() {
	Describe("bypass "+c.class+" ("+c.title+")", Ordered, ContinueOnFailure, Label("bypass", "bypass-"+c.class), func() {
		var bt *harness.BypassTrial
		var target targets.Target
		var on knownfindings.Subject
		var skip string

		BeforeAll(func(ctx SpecContext) {
			cfg, err := harness.FromEnv()
			Expect(err).NotTo(HaveOccurred())
			target, err = harness.NewTarget(cfg)
			Expect(err).NotTo(HaveOccurred(), "target")
			on = subject(target.Name(), target.Version(), cfg.Fault)
			switch {
			case c.proxyOnly && targets.DenyAll(target):
				skip = fmt.Sprintf("%s denies all network: it has no allow-list, which the %s cases (%s) test", target.Name(), c.class, c.title)
				return
			case c.needs != "" && !targets.Has(target, c.needs):
				skip = fmt.Sprintf("%s does not claim %s", target.Name(), c.needs)
				return
			}
			bt, err = harness.RunBypass(ctx, cfg, harness.Bypass{Class: c.class, Names: c.names, Session: c.session, TTY: c.tty,
				Build: func(f *nethost.Hosts, t targets.Target) (targets.Policy, []classify.BypassCase) {
					return c.policy(f), c.build(f, t)
				}})
			Expect(err).NotTo(HaveOccurred(), "bypass trial setup")
			specreport.AttachEvidence(bt)
			on = subject(bt.Target, bt.TargetVersion, bt.Fault)
		})

		for _, bc := range c.cases {
			if bc.control {
				continue
			}
			name := c.scenario(bc.id)
			It(bc.what, Label("bypass-"+c.class+"-"+bc.id), func() {
				if skip != "" {
					notApplicable(name, skip)
				}
				r, ok := bt.Result.Cases[name]
				if !ok {
					expect(judgement{name: name, outcome: classify.HarnessError, hint: "case not classified", on: on})
					return
				}
				if r.Outcome == classify.NotApplicable {
					notApplicable(name, r.Hint)
				}
				pass := r.Outcome == classify.Correct
				hint := r.Hint
				if bc.passIfRefusedToStart && r.Outcome == classify.SandboxFailed {
					pass, hint = true, "refused to start, loudly: "+r.Hint
				}
				j := judgement{name: name, outcome: r.Outcome, pass: pass, hint: hint, on: on}
				if !pass {
					j.breaches = []knownfindings.Breach{bypassBreach(name, bc, bt, r)}
				}
				expect(j)
			})
		}
	})
}

// build turns the class's cases into requests for the running fixture; a case needing a
// capability the target lacks is not applicable.
func (c bypassClass) build(f *nethost.Hosts, t targets.Target) []classify.BypassCase {
	var out []classify.BypassCase
	for _, bc := range c.cases {
		r := bc.req(f)
		r.ID = bc.id
		x := classify.BypassCase{Raw: r, AllowedOK: bc.allowedOK, Control: bc.control, PolicyRefusal: bc.policyRefusal}
		if !bc.control {
			x.Name = c.scenario(bc.id)
		}
		if bc.needs != "" && !targets.Has(t, bc.needs) {
			x.NotApplicable = fmt.Sprintf("%s does not claim %s", t.Name(), bc.needs)
		}
		out = append(out, x)
	}
	return out
}

// bypassBreach is what a failing case breached, in the terms known findings are keyed by: the
// check is VIA:ROLE for a case that reached something (VIA:terminal for injected input),
// VIA:proxy for a dead proxy, VIA:allowed for the control refused, else the trial.
func bypassBreach(name string, bc bypassCase, bt *harness.BypassTrial, r classify.BypassCaseResult) knownfindings.Breach {
	via := ""
	for _, c := range bt.Cases {
		if c.Name == name {
			via = c.Raw.Via
		}
	}
	b := knownfindings.Breach{Scenario: name, Outcome: r.Outcome}
	switch r.Outcome {
	case classify.NonEnforcing:
		b.Check = via + ":" + r.Reached
		b.What = fmt.Sprintf("%s: %s reached (%s)", bc.id, r.Reached, via)
	case classify.ProxyDead:
		b.Check, b.What = via+":proxy", fmt.Sprintf("%s: proxy dead (%s)", bc.id, via)
	case classify.AllowedBlocked:
		b.Check, b.What = via+":allowed", fmt.Sprintf("%s: the allowed host refused (%s)", bc.id, via)
	default:
		b.Check, b.What = knownfindings.CheckTrial, fmt.Sprintf("%s: %s (%s)", bc.id, r.Outcome, strings.TrimSpace(r.Hint))
	}
	return b
}
