// Package concurrency is the concurrent sessions family: several sandboxes at once, each correct
// through its own proxy, the workspace as it was once all have ended.
//
// Sandbox starts (journal: families.concurrency.sessions): k per spec (the trial's Sessions,
// default 4), started together, which is what the family tests; they cannot share one.
package concurrency

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/concurrent"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// concurrencyK is how many sandboxes start together (the trial's Sessions, default 4). The specs'
// names say it, so it is read as the specs are built, from the trial's configuration.
func concurrencyK() int {
	if cfg, err := harness.Current(); err == nil && cfg.Sessions > 0 {
		return cfg.Sessions
	}
	return 4
}

// Concurrent sessions: agents run many sandboxed commands at once. Every session must still be
// correct through its own proxy, and the workspace must be as it was once all have ended.
var _ = Describe("concurrent sessions", Label(family), func() {
	k := concurrencyK()
	for _, shared := range []bool{false, true} {
		m := modeOf(shared)
		name := m.scenario(k)
		It(m.spec(k), Label(m.label()), func(ctx SpecContext) {
			cfg, err := harness.Current()
			Expect(err).NotTo(HaveOccurred())
			ct, err := concurrent.Run(ctx, cfg, k, shared)
			Expect(err).NotTo(HaveOccurred(), "concurrency trial setup")
			specreport.AttachEvidence(ct)
			o, hint := ct.Result.Outcome, ct.Result.Hint
			if o == model.Correct && len(ct.Leftovers) > 0 {
				// Every session worked, but the user's workspace was changed behind its back.
				o = model.Residue
				hint = "workspace not as it was after the sessions: " + strings.Join(ct.Leftovers, ", ")
			}
			j := model.Scenario{Name: name, Outcome: o, Pass: o == model.Correct, Hint: hint}
			if !j.Pass {
				results := make([]classify.Result, len(ct.Sessions))
				workspaces := make([]string, len(ct.Sessions))
				for i, s := range ct.Sessions {
					results[i], workspaces[i] = s.Result, s.Workspace
				}
				j.Breaches = verdict.SessionBreaches(name, results, ct.Leftovers, workspaces, verdict.Hosts{})
			}
			judge.Expect(judge.Subject(ct.Target, ct.TargetVersion, ct.Fault), j)
		})
	}
})
