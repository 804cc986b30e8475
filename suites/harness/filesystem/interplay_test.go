package filesystem

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/suites/probe"
)

// TestInterplayChecksKeepTheirOwnEvidence: the session runs every check before the host looks,
// so no check may move what another check's host evidence is (a file whose disappearance, change
// or identity decides it). Otherwise a rename that went through decides a check whose own
// operation failed (bubblewrap's file rename, EBUSY, read as non-enforcing because the parent
// rename had moved the file's directory), or hides one that went through.
func TestInterplayChecksKeepTheirOwnEvidence(t *testing.T) {
	l := newFSInterplay(t.TempDir())
	checks := l.checks("token")
	within := func(p, dir string) bool { return p != "" && (p == dir || strings.HasPrefix(p, dir+"/")) }
	for _, q := range checks {
		if q.plan.Check.Op != probe.OpRename {
			continue
		}
		moved := filepath.Clean(q.plan.Check.Path)
		for _, p := range checks {
			if p.Name == q.Name {
				continue
			}
			evidence := []string{p.plan.Gone, p.plan.Changed, p.plan.Written, p.plan.Linked, p.plan.Outside}
			if p.plan.Linked != "" {
				evidence = append(evidence, p.plan.Check.Path2)
			}
			for _, e := range evidence {
				if within(e, moved) {
					t.Errorf("%s's evidence %s is moved by %s (rename %s)", p.Name, e, q.Name, moved)
				}
			}
		}
	}
}
