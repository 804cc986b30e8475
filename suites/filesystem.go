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

// Filesystem isolation under the policy "write only the workspace, never read the secret":
// writes inside succeed, writes anywhere else and every escape route fail, the canary secret
// stays unreadable, and the files srt protects in the workspace cannot be created or changed.
// Checks that need a capability the target does not claim (deny-read, protected files) are
// reported not-applicable.
var _ = Describe("filesystem isolation", Ordered, ContinueOnFailure, Label("filesystem"), func() {
	var ft *filesystem.Trial
	var on knownfindings.Subject
	var paths map[string]string

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.FromEnv()
		Expect(err).NotTo(HaveOccurred())
		ft, err = filesystem.Run(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "filesystem trial setup")
		specreport.AttachEvidence(ft)
		on = subject(ft.Target, ft.TargetVersion, ft.Fault)
		paths = fsPaths(ft)
	})

	// The aggregate: known only when each check it shows breached is a known finding of its own.
	It("confines writes to the workspace and hides the secret (overall)", Label("seed"), func() {
		r := ft.Result
		expect(judgement{name: "filesystem/isolation", outcome: r.Outcome, pass: r.Outcome == model.Correct, hint: r.Hint,
			breaches: knownfindings.FSBreaches(r, filesystem.CheckNames(), paths), on: on})
	})

	for _, name := range filesystem.CheckNames() {
		scenario := knownfindings.FSScenario(name)
		It(name, Label("fs-"+labelOf(name)), func() {
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
				j.breaches = []knownfindings.Breach{knownfindings.FSCheckBreach(c, paths[name])}
			}
			expect(j)
		})
	}
})

// fsPaths spells each check's path as findings do. The paths are the ones the probe reports it
// tried (its spec, $TMPDIR expanded inside); the workspace is the policy's writable path.
func fsPaths(ft *filesystem.Trial) map[string]string {
	if ft.Observation == nil {
		return nil
	}
	var ws string
	if len(ft.Policy.WritablePaths) > 0 {
		ws = ft.Policy.WritablePaths[0]
	}
	return knownfindings.FSPathsHome(ft.Observation.FS, ws, ft.Home())
}

// labelOf is the group of a check name ("escape/symlink" -> "escape").
func labelOf(name string) string {
	for i := range name {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return name
}
