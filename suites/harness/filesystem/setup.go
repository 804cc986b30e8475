//go:build linux

package filesystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// The setup class: what the next session's set-up does with what the command left behind. A
// sandbox that protects a path which is not there yet mounts something on it when it starts, and
// bubblewrap makes that mount point on the host, as the user, before the command runs. A link
// planted there is followed then: one pointing through /oldroot, where bubblewrap keeps the
// host's root while it sets up, makes its target on the host (bubblewrap before 0.12.0 and srt
// up to 0.0.63 with it). So the command plants links in next/, the directory the next session
// starts in, at paths a sandbox protects, each to a file in the trial's directory that the
// command cannot write; then a second session starts there with the same policy, and the host
// looks for the files.

// ClassSetup is the class of the checks the next session decides.
const ClassSetup = "setup"

// plants are the setup checks: where in next/ each link goes. A file a sandbox protects, a
// directory, and one below a directory the command makes for it.
var plants = []struct{ name, path string }{
	{"planted-file", ".mcp.json"},
	{"planted-dir", ".idea"},
	{"planted-nested", filepath.Join(".claude", "agents")},
}

// next is the working directory of the next session; setupDir holds the links' targets, in the
// trial's directory, outside the writable HOME.
func (l fsInterplay) next() string     { return filepath.Join(l.ws, "next") }
func (l fsInterplay) setupDir() string { return filepath.Join(filepath.Dir(l.home), "setup") }

// setupChecks plant each link, its target spelled through /oldroot.
func (l fsInterplay) setupChecks() []InterplayCheck {
	var out []InterplayCheck
	for _, p := range plants {
		target := filepath.Join(l.setupDir(), p.name)
		out = append(out, InterplayCheck{Class: ClassSetup, Name: p.name, Needs: []model.Capability{model.CapProtectedFiles},
			plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpSymlink, Path: filepath.Join(l.next(), p.path), Path2: "/oldroot" + target, Mkdir: true},
				Outside: target, Next: true}})
	}
	return out
}

// runNext starts the next session in next/, the trial's policy and HOME, if a setup check was
// tried, and returns how it went: whether it started, its exit, the head of what it said. The
// command is the probe with nothing to do: the set-up is what is under test.
func runNext(ctx context.Context, t *harness.Trial, l fsInterplay, plans []fsplan.Plan, na fsplan.Skipped, policy targets.Policy) (string, error) {
	tried := slices.ContainsFunc(plans, func(p fsplan.Plan) bool { _, skip := na[p.Check.Name]; return p.Next && !skip })
	if !tried {
		return "", nil
	}
	x, err := t.Exec(ctx, probe.Spec{Nonce: harness.RandomHex(8)}, func(s *targets.Session) {
		s.Policy = policy
		s.Workspace = l.next()
		s.Env = targets.SetEnv(s.Env, "HOME", l.home)
	}, nil)
	if err != nil {
		return "", fmt.Errorf("setup: the next session: %w", err)
	}
	switch {
	case x.Out.Ran:
		return fmt.Sprintf("the next session started (exit %d)", x.Run.Exit), nil
	case x.Run.TimedOut:
		return "the next session timed out before its command ran", nil
	}
	said, _, _ := strings.Cut(strings.TrimSpace(x.Run.Stderr), "\n")
	return fmt.Sprintf("the next session did not start (exit %d): %s", x.Run.Exit, said), nil
}

// setupLayout makes next/ and the empty directory for the links' targets, which the user owns
// (the trial's directory is chowned to it), as a directory of the user's outside the sandbox.
func (l fsInterplay) setupLayout() error {
	if err := os.RemoveAll(l.setupDir()); err != nil {
		return fmt.Errorf("setup layout: %w", err)
	}
	return os.MkdirAll(l.setupDir(), 0o755)
}
