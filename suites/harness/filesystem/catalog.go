//go:build linux

package filesystem

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
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
		what := strings.ReplaceAll(p.describe(), ws, "$WORKSPACE")
		out = append(out, CheckInfo{Name: p.check.Name, Needs: []model.Capability{fsNeeds(p.check.Name)}, What: what})
	}
	return out
}

// InterplayChecks describes the fs-interplay trial's checks, in order, each with its class; the
// fake HOME the command runs with is spelled $HOME.
func InterplayChecks() []CheckInfo {
	l := newFSInterplay("$TRIAL")
	var out []CheckInfo
	for _, c := range l.checks("t") {
		what := strings.ReplaceAll(c.plan.describe(), l.home, "$HOME")
		out = append(out, CheckInfo{Class: cmp.Or(c.Class, ClassInterplay), Name: c.Name, Needs: c.Needs, What: what + ", from $HOME/proj/sub" + strings.ReplaceAll(c.about, l.home, "$HOME")})
	}
	return out
}

// describe says what a plan tries and what the policy says of it.
func (p fsPlan) describe() string {
	c := p.check
	var what string
	switch c.Op {
	case probe.OpWrite:
		what = "writing " + c.Path
		if c.Mkdir {
			what = "creating " + c.Path + " and its directories"
		}
	case probe.OpAppend:
		what = "appending to " + c.Path
	case probe.OpRead:
		what = "reading " + c.Path
	case probe.OpLink:
		what = fmt.Sprintf("hard-linking %s to %s", c.Path, c.Path2)
	case probe.OpRename:
		what = fmt.Sprintf("renaming %s to %s", c.Path, c.Path2)
	case probe.OpPtrace:
		what = "taking over a process in view that is less confined than the command (no seccomp filter, or capabilities the command lacks) by ptrace or by opening its memory for writing"
	case probe.OpSymlink:
		what = fmt.Sprintf("creating the symlink %s to %s", c.Path, c.Path2)
	default:
		what = c.Op + " " + c.Path
	}
	switch c.Privileged {
	case probe.PrivRemount:
		what = "after remounting its mount read-write, " + what
	case probe.PrivUnmount:
		what = "after unmounting the mounts over it, " + what
	}
	if p.late != nil {
		what += ", made on the host after the command started,"
	}
	if p.allow {
		return what + " succeeds"
	}
	return what + " is refused"
}
