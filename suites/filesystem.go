package suites

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/specreport"
)

// Filesystem isolation under the policy "write only the workspace, never read the secret":
// writes inside succeed, writes anywhere else and every escape route fail, the canary secret
// stays unreadable, and the files srt protects in the workspace cannot be created or changed.
// Checks that need a capability the target does not claim (deny-read, protected files) are
// reported not-applicable.
var _ = Describe("filesystem isolation", Ordered, ContinueOnFailure, Label("filesystem"), func() {
	var ft *harness.FilesystemTrial

	BeforeAll(func(ctx SpecContext) {
		cfg, err := harness.FromEnv()
		Expect(err).NotTo(HaveOccurred())
		ft, err = harness.RunFilesystem(ctx, cfg)
		Expect(err).NotTo(HaveOccurred(), "filesystem trial setup")
		specreport.AttachEvidence(ft)
	})

	It("confines writes to the workspace and hides the secret (overall)", Label("seed"), func() {
		verdict("filesystem/isolation", ft.Result.Outcome, ft.Result.Hint)
	})

	for _, name := range harness.FSCheckNames() {
		It(name, Label("fs-"+labelOf(name)), func() {
			c, ok := ft.Result.Checks[name]
			if !ok {
				verdict("filesystem/"+name, ft.Result.Outcome, ft.Result.Hint)
				return
			}
			if c.Outcome == classify.NotApplicable {
				notApplicable("filesystem/"+name, c.Hint)
			}
			verdict("filesystem/"+name, c.Outcome, c.Hint)
		})
	}
})

// labelOf is the group of a check name ("escape/symlink" -> "escape").
func labelOf(name string) string {
	for i := range name {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return name
}
