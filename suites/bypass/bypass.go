// Package bypass holds the bypass scenarios (issue 12): the ways allow-list sandboxes have
// actually been escaped, each a crafted request (crafted.Request) sent through the real sandbox and
// judged by what the fixture servers logged. Each case is a spec of its own, bypass/CLASS/CASE,
// labelled bypass, bypass-CLASS and bypass-CLASS-CASE. Classes that share a policy share a
// sandboxed session (a sandbox's start costs more than all its requests): one session sends every
// selected case of its classes at once. The filesystem class (fs-interplay) runs the filesystem
// probe instead.
//
// Sandbox starts (journal: families.bypass.sessions): one per policy (sessions(), each titled
// in the specs by the classes it holds) and the filesystem trial's; a session none of whose cases
// applies to the target is not started. A session of its own where the policy differs (the allowed names, reading-only methods, private addresses refused,
// credentials masked), and for the classes that change what the next check meets: the
// filesystem trial (its checks move, link and plant files the later ones read) and the
// policy-tamper session (a tamper that got through would change every verdict after it).
package bypass

import (
	"cmp"
	"fmt"

	"github.com/sandcheck/sandcheck/suites/probe/crafted"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	_ "github.com/sandcheck/sandcheck/suites/bypass/bypassfaults" // the family's known-bad faults
	bypasstrial "github.com/sandcheck/sandcheck/suites/bypass/trial"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets"
)

// bypassCase is one case of a class, declared before any fixture exists (Ginkgo builds its tree
// first); req builds the request once the fixture's addresses are known.
type bypassCase struct {
	id, what string
	req      func(f *nethost.Hosts) crafted.Request
	// allowedOK and policyRefusal: see bypasstrial.Case.
	allowedOK, policyRefusal bool
	// passIfRefusedToStart: the sandbox refusing to start at all, loudly, also passes (a
	// configuration it documents as invalid).
	passIfRefusedToStart bool
	// needs is what this case needs of a target beyond its class's needs.
	needs model.Capability
	// mustCarry and mustNotCarry name canaries: see bypasstrial.Case.
	mustCarry, mustNotCarry []string
	// throughParent: see bypasstrial.Case.
	throughParent bool
}

// skip says why a target cannot be judged on this case beyond its class ("" when it can).
func (bc bypassCase) skip(t targets.Target) string { return targets.Lacks(t, bc.needs) }

// bypassClass is one class: its cases and what a target needs for them.
type bypassClass struct {
	class, title string
	cases        []bypassCase
	// proxyOnly: every case goes through the proxy; on a target without one they are not
	// applicable.
	proxyOnly bool
	needs     model.Capability // the class as a whole (port rules...)
}

// bypassSession is one sandboxed session: classes sharing a policy, their fixture names.
type bypassSession struct {
	title   string
	classes []bypassClass
	names   []nethost.Name
	policy  func(f *nethost.Hosts, t targets.Target) targets.Policy
	session func(*targets.Session)
	tty     bool
	// noControls: the policy allows nothing, so no control can exist (policyRefusal cases).
	noControls bool
	// ipControls: the controls name the allowed host by its address, not its name (the names
	// are what the session's cases test).
	ipControls bool
	// tlsConnect: the CONNECT control asks over TLS, on port 443: a proxy that intercepts TLS in
	// its tunnels (Codex under reading methods only) reads nothing else there.
	tlsConnect bool
	// parent: the sandbox sends what it allows through a parent proxy (bypasstrial.Plan.Parent).
	parent bool
	// canaries are secrets planted in the session (the secrets class).
	canaries []bypasstrial.Canary
}

func scenarioName(class, id string) string { return "bypass/" + class + "/" + id }

// labels are a case's spec labels.
func (c bypassClass) labels(id string) []string {
	return []string{"bypass-" + c.class, "bypass-" + c.class + "-" + id}
}

// skip says why a target cannot be judged on a class ("" when it can).
func (c bypassClass) skip(t targets.Target) string {
	if c.proxyOnly && targets.DenyAll(t) {
		return fmt.Sprintf("%s denies all network: it has no allow-list, which the %s cases (%s) test", t.Name(), c.class, c.title)
	}
	if why := targets.Lacks(t, c.needs); why != "" {
		return why
	}
	if why := targets.UnjudgedReason(t, "bypass/"+c.class); why != "" {
		return why
	}
	return ""
}

// selected says whether the run's label filter selects a case's spec.
func selected(c bypassClass, id string) bool {
	f := GinkgoLabelFilter()
	if f == "" {
		return true
	}
	match, err := types.ParseLabelFilter(f)
	return err != nil || match(append([]string{family}, c.labels(id)...))
}

// describe declares the session's specs.
func (s bypassSession) describe() {
	Describe("bypass: "+s.title, Ordered, ContinueOnFailure, Label(family), func() {
		var bt *bypasstrial.Trial
		var on knownfindings.Subject
		skips := map[string]string{} // class, or class/case, -> why the target cannot be judged on it

		BeforeAll(func(ctx SpecContext) {
			cfg, err := harness.Current()
			Expect(err).NotTo(HaveOccurred())
			target, err := harness.NewTarget(cfg)
			Expect(err).NotTo(HaveOccurred(), "target")
			on = judge.Subject(target.Name(), target.Version(), cfg.Fault)
			run := false
			for _, c := range s.classes {
				if skips[c.class] = c.skip(target); skips[c.class] != "" {
					continue
				}
				for _, bc := range c.cases {
					name := scenarioName(c.class, bc.id)
					if skips[name] = cmp.Or(bc.skip(target), targets.UnjudgedReason(target, name)); skips[name] == "" {
						run = run || selected(c, bc.id)
					}
				}
			}
			if !run {
				return // nothing selected can be judged: no sandbox to start
			}
			bt, err = bypasstrial.Run(ctx, cfg, bypasstrial.Plan{Class: s.title, Names: s.names, Session: s.session, TTY: s.tty, Canaries: s.canaries, Parent: s.parent,
				Build: func(f *nethost.Hosts, t targets.Target) (targets.Policy, []bypasstrial.Case) {
					return s.policy(f, t), s.build(f, t, skips)
				}})
			Expect(err).NotTo(HaveOccurred(), "bypass trial setup")
			specreport.AttachEvidence(bt)
			on = judge.Subject(bt.Target, bt.TargetVersion, bt.Fault)
		})

		for _, c := range s.classes {
			for _, bc := range c.cases {
				name := scenarioName(c.class, bc.id)
				It(bc.what, Label(c.labels(bc.id)...), func() {
					if why := cmp.Or(skips[c.class], skips[name]); why != "" {
						judge.NotApplicable(name, why)
					}
					r, ok := bt.Result.Cases[name]
					if !ok {
						judge.Expect(on, model.Scenario{Name: name, Outcome: model.HarnessError, Hint: "case not classified"})
						return
					}
					if r.Outcome == model.NotApplicable {
						judge.NotApplicable(name, r.Hint)
					}
					pass := r.Outcome == model.Correct
					hint := r.Hint
					if bc.passIfRefusedToStart && r.Outcome == model.SandboxFailed {
						pass, hint = true, "refused to start, loudly: "+r.Hint
					}
					j := model.Scenario{Name: name, Outcome: r.Outcome, Pass: pass, Hint: hint}
					if !pass {
						j.Breaches = []model.Breach{bt.Breach(name, bc.id, r)}
					}
					judge.Expect(on, j)
				})
			}
		}
	})
}

// build turns the selected cases of the classes the target can be judged on into requests for
// the running fixture, with the proxy controls when any of them goes through the proxy.
func (s bypassSession) build(f *nethost.Hosts, t targets.Target, skips map[string]string) []bypasstrial.Case {
	var out []bypasstrial.Case
	proxy := false
	for _, c := range s.classes {
		if skips[c.class] != "" {
			continue
		}
		for _, bc := range c.cases {
			if !selected(c, bc.id) || skips[scenarioName(c.class, bc.id)] != "" {
				continue
			}
			r := bc.req(f)
			r.ID = c.class + "." + bc.id
			proxy = proxy || bypasstrial.ViaProxy(r.Via)
			out = append(out, bypasstrial.Case{Name: scenarioName(c.class, bc.id), Raw: r, AllowedOK: bc.allowedOK, PolicyRefusal: bc.policyRefusal,
				MustCarry: bc.mustCarry, MustNotCarry: bc.mustNotCarry, ThroughParent: bc.throughParent})
		}
	}
	if proxy && !s.noControls {
		out = append(out, bypasstrial.Controls(f, s.ipControls, s.tlsConnect)...)
	}
	return out
}
