//go:build linux

package filesystem

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/harness/latefiles"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The globs class, in the fs-interplay session: read-denied patterns and files that appear after
// the session started. A sandbox that expands a pattern when it starts (bind mounts over the
// matches it finds) covers the files that exist then and no later one; one that cannot apply a
// pattern must refuse it, not drop it. The late files are made by the host while the command
// runs: the probe asks for each (an await mark in the working directory), the host makes it and
// acks, the probe reads it. Only the host's record of having made a file makes a refusal count.

// ClassGlobs is the class of the checks below.
const ClassGlobs = "globs"

// Paths of the class: a directory of keys under a read-denied pattern (one there from the
// start, one made late), a late file in the read-denied directory, and a key under a pattern
// whose first path element holds the wildcard, which a sandbox that walks from a literal
// directory cannot apply.
func (l fsInterplay) vault() string      { return filepath.Join(l.ws, "vault") }
func (l fsInterplay) earlyKey() string   { return filepath.Join(l.vault(), "early.key") }
func (l fsInterplay) lateKey() string    { return filepath.Join(l.vault(), "late.key") }
func (l fsInterplay) lateInDir() string  { return filepath.Join(l.private(), "late") }
func (l fsInterplay) keyGlob() string    { return filepath.Join(l.vault(), "*.key") }
func (l fsInterplay) unanchored() string { return filepath.Join(l.ws, "keys", "secret.pem") }

// unanchoredGlob matches unanchored() alone, with a wildcard for the last letter of its first
// path element (/tmp/... is denied as /tm?/...).
func (l fsInterplay) unanchoredGlob() string {
	first, rest, _ := strings.Cut(strings.TrimPrefix(l.unanchored(), "/"), "/")
	return "/" + first[:len(first)-1] + "?/" + rest
}

// globPolicy is what the class adds to the trial's deny-read entries.
func (l fsInterplay) globPolicy() []string { return []string{l.keyGlob(), l.unanchoredGlob()} }

// globChecks are the class's checks. late-in-denied-dir needs deny-read only: a directory
// denied as such hides what appears in it later.
func (l fsInterplay) globChecks(token string) []InterplayCheck {
	canary := "sandcheck-canary " + token + "\n"
	read := func(p string) fsplan.Plan { return fsplan.Plan{Check: probe.FSCheck{Op: probe.OpRead, Path: p}} }
	late := func(name, p string) fsplan.Plan {
		pl := read(p)
		pl.Late = &latefiles.File{Path: p, Content: canary, Await: filepath.Join(l.ws, ".sandcheck-await-"+name)}
		pl.Check.Await = pl.Late.Await
		return pl
	}
	g := []model.Capability{model.CapDenyReadGlob}
	by := func(pattern string) string { return "; " + pattern + " is read-denied" }
	return []InterplayCheck{
		{Class: ClassGlobs, Name: "existing", Needs: g, plan: read(l.earlyKey()), about: by(l.keyGlob())},
		{Class: ClassGlobs, Name: "late", Needs: g, plan: late("late", l.lateKey()), about: by(l.keyGlob())},
		{Class: ClassGlobs, Name: "unanchored", Needs: g, plan: read(l.unanchored()),
			about: "; the same path with a wildcard for the last letter of its first element (/tm?/...) is read-denied"},
		{Class: ClassGlobs, Name: "late-in-denied-dir", Needs: []model.Capability{model.CapDenyRead},
			plan: late("late-in-denied-dir", l.lateInDir()), about: by(l.private())},
	}
}

// stageLate stages the late files of plans (latefiles.Stage).
func stageLate(ctx context.Context, plans []fsplan.Plan) (stop func()) {
	var files []*latefiles.File
	for _, p := range plans {
		if p.Late != nil {
			files = append(files, p.Late)
		}
	}
	return latefiles.Stage(ctx, files)
}
