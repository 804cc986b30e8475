// Package filesystem is the filesystem isolation family: every check of the filesystem trial
// (suites/harness/filesystem) as a scenario of its own, and filesystem/isolation summing them up.
//
// Sandbox starts (journal: families.filesystem.sessions): one per trial, every check in it. A
// check that got through changes only its own path (each writes where no other looks), and the
// host side removes it before judging the next trial.
package filesystem

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	fstrial "github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// Filesystem isolation under the policy "write only the workspace, never read the secret":
// writes inside succeed, writes anywhere else and every escape route fail, the canary secret
// stays unreadable, and the files srt protects in the workspace cannot be created or changed.
// Checks that need a capability the target does not claim (deny-read, protected files) are
// reported not-applicable.
// isolation sums up every check (filesystem/CHECK): the family's aggregate.
var isolation = knownfindings.DeclareAggregate("filesystem/isolation", "the filesystem checks (filesystem/CHECK)")

var _ = Describe("filesystem isolation", Ordered, ContinueOnFailure, Label(family), func() {
	var ft *fstrial.Trial
	var on knownfindings.Subject
	var paths map[string]string

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		ft, err = fstrial.Run(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "filesystem trial setup")
		specreport.AttachEvidence(ft)
		on = judge.Subject(ft.Target, ft.TargetVersion, ft.Fault)
		paths = judge.FSPaths(ft)
	})

	// The aggregate: known only when each check it shows breached is a known finding of its own.
	It(isolationSpec, Label(isolationLabels...), func() {
		r := ft.Result
		judge.Expect(on, model.Scenario{Name: isolation, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint,
			Breaches: verdict.FSBreaches(r, fstrial.CheckNames(), paths)})
	})

	for _, name := range fstrial.CheckNames() {
		scenario := verdict.FSScenario(name)
		It(name, Label(checkLabel(name)), func() {
			judge.FSCheck(ft, name, scenario, paths[name], on)
		})
	}
})

// checkLabel is a check's label, its group's ("escape/symlink" -> "fs-escape").
func checkLabel(name string) string {
	group, _, _ := strings.Cut(name, "/")
	return "fs-" + group
}
