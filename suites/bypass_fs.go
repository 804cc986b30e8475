package suites

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

// fs-interplay: filesystem rules that meet (filesystem.RunInterplay). A check's breach is keyed
// by its path, the fake HOME spelled $HOME.
var _ = Describe("bypass fs-interplay (filesystem rules that meet)", Ordered, ContinueOnFailure, Label("bypass", "bypass-fs-interplay"), func() {
	var ft *filesystem.Trial
	var on knownfindings.Subject

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.FromEnv()
		Expect(err).NotTo(HaveOccurred())
		ft, err = filesystem.RunInterplay(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "fs-interplay trial setup")
		specreport.AttachEvidence(ft)
		on = subject(ft.Target, ft.TargetVersion, ft.Fault)
	})

	for _, name := range filesystem.InterplayNames() {
		scenario := "bypass/fs-interplay/" + name
		It(name, Label("bypass-fs-interplay-"+name), func() {
			c, ok := ft.Result.Checks[name]
			if !ok {
				r := ft.Result
				expect(judgement{name: scenario, outcome: r.Outcome, pass: r.Outcome == model.Correct, hint: r.Hint, on: on})
				return
			}
			if c.Outcome == model.NotApplicable {
				notApplicable(scenario, c.Hint)
			}
			j := judgement{name: scenario, outcome: c.Outcome, pass: c.Outcome == model.Correct, hint: c.Hint, on: on}
			if !j.pass {
				b := knownfindings.FSCheckBreach(c, filesystem.InterplayPath(ft, name))
				b.Scenario = scenario
				j.breaches = []knownfindings.Breach{b}
			}
			expect(j)
		})
	}
})
