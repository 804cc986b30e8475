//go:build linux

// Package nesting holds the bypass family's nesting class: the user-namespace and ptrace checks
// again, with the sandbox in the weaker mode it documents for running nested, inside a
// container (filesystem.RunNesting). A session of its own: the mode is the whole sandbox's.
package nesting

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

func scenario(name string) string { return "bypass/" + filesystem.ClassNesting + "/" + name }

func labels(name string) []string {
	return []string{"bypass-" + filesystem.ClassNesting, "bypass-" + filesystem.ClassNesting + "-" + name}
}

var _ = Describe("bypass nesting (the sandbox's weaker mode for nested use)", Ordered, ContinueOnFailure, Label("bypass"), func() {
	var ft *filesystem.Trial
	var on knownfindings.Subject

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		ft, err = filesystem.RunNesting(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "nesting trial setup")
		specreport.AttachEvidence(ft)
		on = judge.Subject(ft.Target, ft.TargetVersion, ft.Fault)
	})

	for _, c := range filesystem.NestingChecks() {
		It(c.Name, Label(labels(c.Name)...), func() {
			judge.FSCheck(ft, c.Name, scenario(c.Name), filesystem.InterplayPath(ft, c.Name), on)
		})
	}
})

// Catalogue lists the class's scenarios, each with the known-bads flags gives it.
func Catalogue(flags []catalog.Flags) []catalog.Scenario {
	var out []catalog.Scenario
	for _, c := range filesystem.NestingChecks() {
		id := scenario(c.Name)
		out = append(out, catalog.Scenario{ID: id, Labels: append([]string{"bypass"}, labels(c.Name)...), Spec: c.Name, What: c.What,
			Needs: catalog.Capability(c.Needs...), KnownBads: catalog.Of(id, flags)})
	}
	return out
}
