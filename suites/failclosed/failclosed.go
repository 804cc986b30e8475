// Package failclosed is the fail-closed honesty family: under each condition that takes
// enforcement away (a helper missing, no namespaces, a port taken), the sandbox refuses loudly
// or still enforces; it never runs the command unconfined or with a dead proxy in silence.
//
// Sandbox starts (journal: families.failclosed.sessions): one per condition. Each condition is a
// fault in the sandbox's own environment (a helper missing from PATH, no user namespaces, the
// bridge's port taken) that holds for its session's whole life: two cannot share a start.
package failclosed

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// Fail-closed honesty: when enforcement cannot be established, the sandbox must refuse to run
// the command, loudly. `failIfUnavailable` in the seed only checked that binaries exist; here
// each way enforcement can be missing is injected into the real sandbox, and the command
// running anyway (with a dead proxy, or none) is a finding, not a pass.
var _ = Describe("fail-closed honesty", Label(family), func() {
	for _, f := range conditions() {
		It(spec(f), Label(label(f)), func(ctx SpecContext) {
			cfg, err := harness.Current()
			Expect(err).NotTo(HaveOccurred())
			if t, err := harness.NewTarget(cfg); err == nil { // else the trial below says why
				if ok, why := f.AppliesTo(t); !ok {
					judge.NotApplicable(scenario(f), why)
				}
			}
			nt, err := network.RunWith(ctx, cfg, network.Options{Condition: f.Name, Faults: []string{f.Name}})
			Expect(err).NotTo(HaveOccurred(), "fail-closed trial setup")
			specreport.AttachEvidence(nt)
			o := nt.Result.Outcome
			pass := o == model.SandboxFailed
			var hint string
			switch {
			case o == model.SandboxFailed:
				hint = "refused loudly: " + nt.Result.Hint
			case o == model.Correct && f.EnforcedOK:
				// The condition did not take enforcement away: the sandbox found another way.
				pass, hint = true, "still enforcing despite the condition: "+nt.Result.Hint
			case o == model.Timeout || o == model.HarnessError:
				hint = nt.Result.Hint
			default:
				hint = fmt.Sprintf("the command ran anyway (exit %d) and its network was %s: %s", nt.Run.Exit, o, nt.Result.Hint)
			}
			j := model.Scenario{Name: scenario(f), Outcome: o, Pass: pass, Hint: hint}
			if !pass {
				j.Breaches = []model.Breach{verdict.ConditionBreach(j.Name, f.Name, o, ranAnyway(o, hint), nt.Result.Egress)}
			}
			judge.Expect(judge.Subject(nt.Target, nt.TargetVersion, nt.Fault), j)
		})
	}
})

// ranAnyway says what a sandbox did under a condition it should have refused to run with.
func ranAnyway(o model.Outcome, hint string) string {
	switch o {
	case model.NonEnforcing:
		return "ran unconfined (the denied host was reached)"
	case model.ProxyDead:
		return "ran anyway with a dead proxy"
	case model.AllowedBlocked:
		return "ran anyway, with the allowed host blocked"
	case model.Correct:
		return "ran anyway instead of refusing (still enforcing)"
	case model.Timeout, model.HarnessError:
		return fmt.Sprintf("not judged: %s (%s)", o, hint)
	}
	return fmt.Sprintf("ran anyway: %s", o)
}
