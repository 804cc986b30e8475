//go:build linux

package filesystem

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/ownbinary"
	"github.com/sandcheck/sandcheck/targets"
)

// starter is a target that starts the program at path.
type starter struct{ path string }

func (s starter) Name() string                                          { return "fake" }
func (s starter) Capabilities() []model.Capability                      { return nil }
func (s starter) Reach() []string                                       { return nil }
func (s starter) Prepare(*targets.Session) (*targets.Invocation, error) { return nil, nil }
func (s starter) Version() string                                       { return "" }
func (s starter) Starts() string                                        { return s.path }

// An npm sandbox's installation is the node_modules its start program lies in, the entry being
// where its .bin link leads; the session's command line then starts the copy's program, the
// copy installed whole (links kept) in the working directory. A program outside node_modules
// has no installation a project carries.
func TestOwnBinaryInstallation(t *testing.T) {
	root := t.TempDir()
	modules := filepath.Join(root, "node_modules")
	entry := filepath.Join(modules, "@x", "sandbox", "dist", "cli.js")
	os.MkdirAll(filepath.Dir(entry), 0o755)
	os.WriteFile(entry, []byte("#!/usr/bin/env node\n"), 0o755)
	os.MkdirAll(filepath.Join(modules, ".bin"), 0o755)
	bin := filepath.Join(modules, ".bin", "sbx")
	if err := os.Symlink("../@x/sandbox/dist/cli.js", bin); err != nil {
		t.Fatal(err)
	}
	in, why := ownbinary.Of(starter{bin})
	if why != "" || in.Modules != modules || in.Start != ".bin/sbx" || in.Entry != "@x/sandbox/dist/cli.js" {
		t.Fatalf("installation = %+v, %q", in, why)
	}
	for _, p := range []string{"/usr/bin/bwrap", "bwrap"} {
		if _, why := ownbinary.Of(starter{p}); why == "" {
			t.Errorf("%s: an installation a project carries", p)
		}
	}

	l := newFSInterplay(t.TempDir())
	l.install = in
	if err := l.layout("tok"); err != nil {
		t.Fatal(err)
	}
	if err := l.installCopy(); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(l.modules(), ".bin", "sbx")
	if got := l.relocate([]string{bin, "--settings", "f"}); !slices.Equal(got, []string{copied, "--settings", "f"}) {
		t.Errorf("relocate = %q", got)
	}
	if got := l.relocate([]string{"/usr/bin/other", bin}); got[0] != "/usr/bin/other" || got[1] != bin {
		t.Errorf("relocate touched another program's command line: %q", got)
	}
	if real, err := filepath.EvalSymlinks(copied); err != nil || !strings.HasPrefix(real, l.modules()+"/") {
		t.Errorf("the copy's program resolves to %s (%v), outside the copy", real, err)
	}
	c := l.ownBinary("tok")
	if c.plan.Tail != filepath.Join(l.modules(), in.Entry) || c.plan.Check.Path != c.plan.Tail {
		t.Errorf("own-binary plan: %+v", c.plan)
	}
}
