//go:build linux

package filesystem

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
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

// installation is where the sandbox under test runs from: the node_modules directory that
// holds its start program, the program's path below it, and the file the program resolves to
// (a link in .bin to a package's entry), below it too.
type installation struct {
	modules, start, entry string
}

// installationOf finds t's installation, or says why it has none a project would carry.
func installationOf(t targets.Target) (installation, string) {
	st, ok := t.(targets.Starter)
	if !ok || !filepath.IsAbs(st.Starts()) {
		return installation{}, t.Name() + " does not say which program it starts"
	}
	start := st.Starts()
	i := strings.LastIndex(start, "/node_modules/")
	if i < 0 {
		return installation{}, fmt.Sprintf("%s is not an npm package's (%s): a project does not carry it", t.Name(), start)
	}
	modules := start[:i+len("/node_modules")]
	real, err := filepath.EvalSymlinks(start)
	if err != nil {
		return installation{}, fmt.Sprintf("%s: %v", start, err)
	}
	rmodules, _ := filepath.EvalSymlinks(modules)
	entry, err := filepath.Rel(rmodules, real)
	if err != nil || strings.HasPrefix(entry, "..") {
		return installation{}, fmt.Sprintf("%s resolves outside its node_modules (%s)", start, real)
	}
	return installation{modules: modules, start: strings.TrimPrefix(start, modules+"/"), entry: entry}, ""
}

// modules is the working directory's node_modules, where the copy goes.
func (l fsInterplay) modules() string { return filepath.Join(l.ws, "node_modules") }

// entryPath is the copy's entry: where the command replaces the sandbox's program (a stand-in
// name where there is no installation, for the catalogue and the host-side tests).
func (l fsInterplay) entryPath() string {
	if l.install.entry == "" {
		return filepath.Join(l.modules(), "sandbox-entry")
	}
	return filepath.Join(l.modules(), l.install.entry)
}

// ownBinary is the check: the copy's entry replaced, which must not reach the host.
func (l fsInterplay) ownBinary(token string) InterplayCheck {
	entry := l.entryPath()
	return InterplayCheck{Class: ClassPersistence, Name: ownBinaryCheck,
		plan:  fsplan.Plan{Check: probe.FSCheck{Op: probe.OpReplace, Path: entry, Content: token}, Tail: entry},
		about: " (the file the sandbox starts from, in a copy of its installation the session runs from)"}
}

// installCopy copies the installation into the working directory (cp -a: the links in .bin
// stay links), replacing the stand-in the layout made for the control without a sandbox.
func (l fsInterplay) installCopy() error {
	if l.install.modules == "" {
		return nil
	}
	if err := os.RemoveAll(l.modules()); err != nil {
		return fmt.Errorf("own-binary copy: %w", err)
	}
	if out, err := exec.Command("cp", "-a", l.install.modules, l.modules()).CombinedOutput(); err != nil {
		return fmt.Errorf("own-binary copy of %s: %v: %s", l.install.modules, err, out)
	}
	return nil
}

// relocate runs the session from the copy: argv's first word, the installation's start
// program, becomes the copy's.
func (l fsInterplay) relocate(argv []string) []string {
	if l.install.modules == "" || len(argv) == 0 || argv[0] != filepath.Join(l.install.modules, l.install.start) {
		return argv
	}
	out := append([]string{}, argv...)
	out[0] = filepath.Join(l.modules(), l.install.start)
	return out
}
