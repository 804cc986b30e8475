// Package ownbinary finds a sandbox's own installation where a project would carry it (an npm
// package's node_modules), copies it into a working directory, and has the sandbox run from the
// copy: the persistence class's own-binary check, where the command replaces the program the
// user's next start of the sandbox runs.
package ownbinary

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/targets"
)

// Installation is where a sandbox runs from: the node_modules directory that holds its start
// program, the program's path below it, and the file the program resolves to (a link in .bin
// to a package's entry), below it too. The zero value is no installation.
type Installation struct {
	Modules, Start, Entry string
}

// Of finds t's installation, or says why it has none a project would carry.
func Of(t targets.Target) (Installation, string) {
	st, ok := t.(targets.Starter)
	if !ok || !filepath.IsAbs(st.Starts()) {
		return Installation{}, t.Name() + " does not say which program it starts"
	}
	start := st.Starts()
	i := strings.LastIndex(start, "/node_modules/")
	if i < 0 {
		return Installation{}, fmt.Sprintf("%s is not an npm package's (%s): a project does not carry it", t.Name(), start)
	}
	modules := start[:i+len("/node_modules")]
	real, err := filepath.EvalSymlinks(start)
	if err != nil {
		return Installation{}, fmt.Sprintf("%s: %v", start, err)
	}
	rmodules, _ := filepath.EvalSymlinks(modules)
	entry, err := filepath.Rel(rmodules, real)
	if err != nil || strings.HasPrefix(entry, "..") {
		return Installation{}, fmt.Sprintf("%s resolves outside its node_modules (%s)", start, real)
	}
	return Installation{Modules: modules, Start: strings.TrimPrefix(start, modules+"/"), Entry: entry}, ""
}

// CopyTo copies the installation's node_modules to dst (cp -a: the links in .bin stay links),
// replacing whatever is there.
func (in Installation) CopyTo(dst string) error {
	if in.Modules == "" {
		return nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("own-binary copy: %w", err)
	}
	if out, err := exec.Command("cp", "-a", in.Modules, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("own-binary copy of %s: %v: %s", in.Modules, err, out)
	}
	return nil
}

// Relocate has argv run from the copy at modules: its first word, the installation's start
// program, becomes the copy's. Any other command line is returned as it is.
func (in Installation) Relocate(argv []string, modules string) []string {
	if in.Modules == "" || len(argv) == 0 || argv[0] != filepath.Join(in.Modules, in.Start) {
		return argv
	}
	out := append([]string{}, argv...)
	out[0] = filepath.Join(modules, in.Start)
	return out
}
