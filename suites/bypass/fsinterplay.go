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

// fs-interplay: filesystem rules that meet (filesystem.RunInterplay). A check's breach is keyed
// by its path, the fake HOME spelled $HOME.
var _ = Describe("bypass fs-interplay (filesystem rules that meet)", Ordered, ContinueOnFailure, Label(family, fsInterplayClass), func() {
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

	for _, name := range filesystem.InterplayNames() {
		scenario := interplayScenario(name)
		It(name, Label(interplayLabel(name)), func() {
			judge.FSCheck(ft, name, scenario, filesystem.InterplayPath(ft, name), on)
		})
	}
})
