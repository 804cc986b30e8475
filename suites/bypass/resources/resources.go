//go:build linux

// Package resources holds the bypass family's limits class (information only): how many
// processes, how much memory and how much of a writable path the command gets before something
// stops it, and whether that was the sandbox. No sandbox promises limits here, so none fails:
// the bypass table says what each one limits. A measurement without its evidence is harness
// trouble all the same.
package resources

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/catalog"
	verdict "github.com/sandcheck/sandcheck/suites/classify/limits"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/limits"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

// Class is the class's name, and InfoLabel marks a scenario that informs and never fails.
const (
	Class     = "limits"
	InfoLabel = "info"
)

// measures are the class's scenarios, in order, with what each says.
var measures = []struct{ id, what string }{
	{verdict.Processes, "how many processes the command starts before a fork is refused, and whether the sandbox refused it (information)"},
	{verdict.Memory, "how much memory a process of the command's takes before it is refused or killed, and whether the sandbox did it (information)"},
	{verdict.Disk, "how much the command writes into a writable path before the write is refused, and whether the sandbox refused it (information)"},
}

func scenario(id string) string { return "bypass/" + Class + "/" + id }

func labels(id string) []string {
	return []string{"bypass-" + Class, "bypass-" + Class + "-" + id, InfoLabel}
}

var _ = Describe("bypass limits (what the sandbox limits, information only)", Ordered, ContinueOnFailure, Label("bypass"), func() {
	var lt *limits.Trial
	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		lt, err = limits.Run(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "limits trial setup")
		specreport.AttachEvidence(lt)
	})
	for _, m := range measures {
		It(m.id, Label(labels(m.id)...), func() {
			name := scenario(m.id)
			if lt.NotApplicable != "" {
				judge.NotApplicable(name, lt.NotApplicable)
			}
			r := lt.Result[m.id]
			if r.Outcome == model.NotApplicable {
				judge.NotApplicable(name, r.Hint)
			}
			on := judge.Subject(lt.Target, lt.TargetVersion, lt.Fault)
			judge.Expect(on, model.Scenario{Name: name, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint, Info: true})
		})
	}
})

// Catalogue lists the class's scenarios; no known-bad flags them (they inform), and the
// family's e2e test holds a sandbox that sets limits to each reading instead.
func Catalogue() []catalog.Scenario {
	var out []catalog.Scenario
	for _, m := range measures {
		out = append(out, catalog.Scenario{ID: scenario(m.id), Labels: append([]string{"bypass"}, labels(m.id)...),
			Spec: m.id, What: m.what, KnownBads: []catalog.KnownBad{}})
	}
	return out
}
