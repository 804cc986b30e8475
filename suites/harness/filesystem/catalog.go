//go:build linux

package filesystem

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// CheckInfo is a check as the catalogue of scenarios shows it: its name, the capabilities a
// target needs for it to apply, and what it tries, in a sentence, with the trial's paths
// spelled as known findings spell them ($TRIAL, $WORKSPACE, $HOME, sandcheck-fs-NONCE).
type CheckInfo struct {
	Class string // the bypass class of an fs-interplay trial's check (ClassInterplay, ClassGit)
	Name  string
	Needs []model.Capability
	What  string
}

// Checks describes the filesystem trial's checks, in order, from the plans a trial runs.
func Checks() []CheckInfo {
	// The workspace where a trial puts it, so that paths joined with ".." come out as they do.
	const dir, home = "$TRIAL", "$HOME"
	ws := filepath.Join(dir, "workspace")
	var out []CheckInfo
	for _, p := range fsPlans(dir, ws, home, "NONCE", "t", fsFiles(dir, ws, "t")) {
		what := strings.ReplaceAll(p.Describe(), ws, "$WORKSPACE")
		out = append(out, CheckInfo{Name: p.Check.Name, Needs: []model.Capability{fsNeeds(p.Check.Name)}, What: what})
	}
	return out
}

// InterplayChecks describes the fs-interplay trial's checks, in order, each with its class; the
// fake HOME the command runs with is spelled $HOME.
func InterplayChecks() []CheckInfo { return describeChecks(fsInterplay.checks, "") }

// NestingChecks describes the nesting trial's checks likewise.
func NestingChecks() []CheckInfo {
	return describeChecks(fsInterplay.nestingChecks, ", the sandbox in its weaker mode for nested use")
}

func describeChecks(of func(fsInterplay, string) []InterplayCheck, mode string) []CheckInfo {
	l := newFSInterplay("$TRIAL")
	var out []CheckInfo
	for _, c := range of(l, "t") {
		what := c.plan.Describe() + ", from " + l.ws + c.about + mode
		if c.plan.Next {
			what = fmt.Sprintf("the symlink %s to %s, planted from %s, is not followed by the set-up of the next session, started in %s",
				c.plan.Check.Path, c.plan.Check.Path2, l.ws, l.next())
		}
		what = strings.ReplaceAll(what, l.home, "$HOME")
		out = append(out, CheckInfo{Class: cmp.Or(c.Class, ClassInterplay), Name: c.Name, Needs: c.Needs, What: what})
	}
	return out
}
