// Package judge turns what a scenario observed into its spec's verdict: attached to the spec's
// report for the runner first, then decided against the target's known findings, then passed,
// skipped (not applicable, or a known finding) or failed. Every scenario family judges through it.
package judge

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

// Subject is what a trial ran against, from its evidence: the target, its version as the adapter
// reports it, and the configured fault (a scenario's own faults are part of the scenario); the
// user is the trial's (harness.Current).
func Subject(target, version, fault string) knownfindings.Subject {
	cfg, _ := harness.Current() // a trial that got this far has a configuration
	return knownfindings.Subject{Target: target, Version: version, Fault: fault, User: model.NormalizeUser(cfg.User)}
}

// Expect decides a spec's verdict v, observed on on, against the target's known findings,
// attaches it, then asserts it. Attaching first means a failing spec still tells the trial what
// it saw; the verdict attached is the one the journal records, breaches covered by their
// findings. A failure is skipped as a known finding of the target only when every breach it
// shows is covered by a finding (targets/NAME/knownfindings.yaml) for this target, version,
// fault and user, and not under SANDCHECK_STRICT=1.
func Expect(on knownfindings.Subject, v model.Scenario) {
	v.Aggregate = knownfindings.IsAggregate(v.Name)
	for _, b := range v.Breaches {
		// A breach keyed to another scenario makes this verdict an aggregate; knownfindings must
		// know it as one, or a finding could be keyed to it.
		if b.Scenario != v.Name && !v.Aggregate {
			Fail(fmt.Sprintf("spec bug: %s sums up %s but is not among knownfindings' aggregates", v.Name, b.Scenario))
		}
	}
	set, loadErr := knownfindings.Load()
	d := set.Decide(on, v)
	specreport.Attach(d.Verdict)
	if v.Pass {
		return
	}
	if cfg, _ := harness.Current(); d.Known() != "" && !cfg.Strict {
		Skip(fmt.Sprintf("known finding of %s: %s", on, matchedText(d.Matched)))
	}
	Fail(failureText(on, d, loadErr))
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
func failureText(on knownfindings.Subject, d knownfindings.Decision, loadErr error) string {
	v := d.Verdict
	msg := fmt.Sprintf("%s: %s: %s", v.Name, v.Outcome, v.Hint)
	if len(d.New) > 0 {
		msg += fmt.Sprintf("\nnot a known finding of %s: %s", on, strings.Join(model.Words(d.New), "; "))
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

// NotApplicable reports a spec the target cannot be judged on, with the reason, and skips it:
// recorded as not-applicable (never silently skipped, never a pass of the sandbox).
func NotApplicable(name, reason string) {
	specreport.Attach(model.Scenario{Name: name, Outcome: model.NotApplicable, Pass: true, Hint: reason})
	Skip("not applicable: " + reason)
}
