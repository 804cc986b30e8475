package bypass

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

// fs-interplay and git: filesystem rules that meet, and the repositories git would run code
// from (filesystem.RunInterplay, one session for both). A check's breach is keyed by its path,
// the fake HOME spelled $HOME.
var _ = Describe("bypass fs-interplay and git (filesystem rules that meet)", Ordered, ContinueOnFailure, Label(family), func() {
	var ft *filesystem.Trial
	var on knownfindings.Subject

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		ft, err = filesystem.RunInterplay(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "fs-interplay trial setup")
		specreport.AttachEvidence(ft)
		on = judge.Subject(ft.Target, ft.TargetVersion, ft.Fault)
	})

	for _, c := range filesystem.InterplayChecks() {
		scenario := scenarioName(c.Class, c.Name)
		It(c.Name, Label(interplayLabels(c)...), func() {
			judge.FSCheck(ft, c.Name, scenario, filesystem.InterplayPath(ft, c.Name), on)
		})
	}
})
