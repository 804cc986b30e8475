//go:build linux

package filesystem

import (
	"path/filepath"

	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The sandbox's own code in a writable path: a project that depends on the sandbox carries it
// in its node_modules (`npx srt`, `npx codex`), and a command that changes it there has the
// user's next start of the sandbox run its code, unsandboxed. The interplay session runs the
// sandbox from a copy of its installation in the working directory's node_modules, owned by
// the user as an npm install leaves it, and the command replaces the file the sandbox starts
// from (a new file renamed over it: the running program's own file refuses writes into it); the
// host side sees whether it changed.

// ownBinaryCheck is the persistence check's name.
const ownBinaryCheck = "own-binary"

// modules is the working directory's node_modules, where the copy goes.
func (l fsInterplay) modules() string { return filepath.Join(l.ws, "node_modules") }

// entryPath is the copy's entry: where the command replaces the sandbox's program (a stand-in
// name where there is no installation, for the catalogue and the host-side tests).
func (l fsInterplay) entryPath() string {
	if l.install.Entry == "" {
		return filepath.Join(l.modules(), "sandbox-entry")
	}
	return filepath.Join(l.modules(), l.install.Entry)
}

// ownBinary is the check: the copy's entry replaced, which must not reach the host.
func (l fsInterplay) ownBinary(token string) InterplayCheck {
	entry := l.entryPath()
	return InterplayCheck{Class: ClassPersistence, Name: ownBinaryCheck,
		plan:  fsplan.Plan{Check: probe.FSCheck{Op: probe.OpReplace, Path: entry, Content: token}, Tail: entry},
		about: " (the file the sandbox starts from, in a copy of its installation the session runs from)"}
}

// installCopy copies the installation into the working directory, replacing the stand-in the
// layout made for the control without a sandbox.
func (l fsInterplay) installCopy() error { return l.install.CopyTo(l.modules()) }

// relocate runs the session from the copy.
func (l fsInterplay) relocate(argv []string) []string { return l.install.Relocate(argv, l.modules()) }
