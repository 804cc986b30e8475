//go:build linux

package filesystem

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
)

const hostToken = "0123456789abcdef0123456789abcdef"

// allDeniedPlans are the denied checks of both filesystem scenarios, laid out under dir.
func allDeniedPlans(dir string) []fsplan.Plan {
	ws := filepath.Join(dir, "workspace")
	var out []fsplan.Plan
	for _, p := range fsPlans(dir, ws, filepath.Join(dir, "home"), "n", hostToken, fsFiles(dir, ws, hostToken)) {
		if !p.Allow {
			out = append(out, p)
		}
	}
	for _, c := range newFSInterplay(dir).checks(hostToken) {
		c.plan.Check.Name = "fs-interplay/" + c.Name
		out = append(out, c.plan)
	}
	return out
}

// TestEveryDeniedCheckIsConfirmedOnTheHost: a denied check whose effect the host side never
// looks for is judged only by what the probe says; a run that timed out, crashed or lost its
// marker then hides the escape as a timeout or harness error. Reads alone have nothing to see on
// the host (they are judged by the canary coming back), and the ptrace check (it proves the
// permission and changes nothing, so the probe's report of it is the evidence).
func TestEveryDeniedCheckIsConfirmedOnTheHost(t *testing.T) {
	for _, p := range allDeniedPlans("/d") {
		if p.Check.Op != probe.OpRead && p.Check.Op != probe.OpPtrace && !p.HostChecked() {
			t.Errorf("%s (%s %s): denied, but the host side never looks for its effect", p.Check.Name, p.Check.Op, p.Check.Path)
		}
	}
}

// insideTree says whether every path the check touches lies under dir, so the test can perform
// it for real (the checks writing /tmp, /etc or $TMPDIR are left out).
func insideTree(c probe.FSCheck, dir string) bool {
	for _, p := range []string{c.Path, c.Path2} {
		p = strings.TrimPrefix(p, "/proc/self/root")
		if p != "" && !strings.HasPrefix(filepath.Clean(p), dir+"/") {
			return false
		}
	}
	return true
}

// freshLayout lays both scenarios' trees out under a new directory and returns its plans.
func freshLayout(t *testing.T) (string, []fsplan.Plan) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if _, err := layout(dir, ws, filepath.Join(dir, "home"), "n", hostToken); err != nil {
		t.Fatal(err)
	}
	if err := newFSInterplay(dir).layout(hostToken); err != nil {
		t.Fatal(err)
	}
	return dir, allDeniedPlans(dir)
}

// perform does the check's operation as the probe does it, with no sandbox.
func perform(t *testing.T, c probe.FSCheck) {
	t.Helper()
	// The operation alone: a privileged step here would remount or unmount this host's own
	// mounts, and the host side judges the operation's effect, however it got through.
	c.Privileged = ""
	obs := probe.Run(probe.Spec{FS: []probe.FSCheck{c}})
	if len(obs.FS) != 1 || !obs.FS[0].OK {
		t.Fatalf("%s without a sandbox: %+v", c.Name, obs.FS)
	}
}

// TestHostSeesEachEscape: every denied check the test can perform under its own tree is, once
// performed without a sandbox, seen by the host side; before it, it is not.
func TestHostSeesEachEscape(t *testing.T) {
	_, plans := freshLayout(t)
	tried := 0
	for i := range plans {
		dir, plans := freshLayout(t)
		p := plans[i]
		if p.Check.Op == probe.OpRead || !insideTree(p.Check, dir) {
			continue
		}
		tried++
		if p.Escaped() {
			t.Errorf("%s: escaped before anything ran", p.Check.Name)
			continue
		}
		perform(t, p.Check)
		if !p.Escaped() {
			t.Errorf("%s: %s %s took effect, the host side did not see it", p.Check.Name, p.Check.Op, p.Check.Path)
		}
		if p.Gone != "" || p.Changed != "" || p.Tail != "" {
			continue // a file moved or changed: nothing to remove, the trial directory goes
		}
		// What escaped does not outlive the trial, and nothing else goes with it. The root is
		// the working directory of the trial the plan is of: the filesystem scenario's
		// workspace, or the fs-interplay layout's subdirectory (its fake HOME for a file there).
		root := filepath.Join(dir, "workspace")
		if ip := newFSInterplay(dir); strings.HasPrefix(p.Check.Path, ip.ws+"/") {
			root = ip.ws
		} else if strings.HasPrefix(p.Check.Path, ip.home+"/") {
			root = ip.home // a file of the fake HOME's own (~/.config/git/config)
		}
		p.RemoveEscape(root)
		if p.Escaped() {
			t.Errorf("%s: still on the host after the trial", p.Check.Name)
		}
		for _, keep := range []string{p.Check.Path2, filepath.Join(dir, "workspace", "newrepo", "README"), filepath.Join(dir, "workspace", ".git", "hooks", "pre-commit")} {
			if _, err := os.Lstat(keep); keep != "" && p.Check.Op != probe.OpRename && err != nil {
				t.Errorf("%s: removing the escape took %s with it", p.Check.Name, keep)
			}
		}
		if p.Check.Mkdir && filepath.Dir(p.Check.Path) != root {
			made := filepath.Dir(p.Check.Path)
			for filepath.Dir(made) != root && filepath.Dir(made) != filepath.Join(dir, "workspace", "newrepo") && made != dir {
				made = filepath.Dir(made)
			}
			if _, err := os.Lstat(made); err == nil {
				t.Errorf("%s: %s, made for the write, is left behind", p.Check.Name, made)
			}
		}
	}
	if tried < 15 {
		t.Fatalf("only %d checks performed", tried)
	}
}

// TestPlaceholdersAreNoEscape: a sandbox may leave empty files or directories at the paths it
// protects (srt's mount points: .claude/, .gitconfig, ...). Only the trial's token proves a
// write; a hard link only when it is the outside file itself.
func TestPlaceholdersAreNoEscape(t *testing.T) {
	for _, name := range []string{"protected/gitconfig", "protected/mcp-json", "protected/vscode", "protected/claude-commands", "protected/git-hooks-new-repo", "escape/hardlink"} {
		t.Run(name, func(t *testing.T) {
			placeholders := []string{"empty file", "directory", "other content"}
			if name == "escape/hardlink" {
				placeholders = append(placeholders, "copy")
			}
			for _, placeholder := range placeholders {
				_, plans := freshLayout(t)
				p := planNamed(t, plans, name)
				path := p.Check.Path
				os.MkdirAll(filepath.Dir(path), 0o755)
				switch placeholder {
				case "empty file":
					os.WriteFile(path, nil, 0o644)
				case "directory":
					os.Mkdir(path, 0o755)
				case "other content":
					os.WriteFile(path, []byte("{}\n"), 0o644)
				case "copy": // the outside file's content (with the token), not the file itself
					b, err := os.ReadFile(p.Check.Path2)
					if err != nil {
						t.Fatal(err)
					}
					os.WriteFile(path, b, 0o644)
				}
				if p.Escaped() {
					t.Errorf("%s: a placeholder (%s) at %s taken for an escape", name, placeholder, path)
				}
			}
		})
	}
}

func planNamed(t *testing.T, plans []fsplan.Plan, name string) fsplan.Plan {
	t.Helper()
	i := slices.IndexFunc(plans, func(p fsplan.Plan) bool { return p.Check.Name == name })
	if i < 0 {
		t.Fatalf("no check %s", name)
	}
	return plans[i]
}

// TestHostEscapeOutlivesTheRun: a workspace escape the host shows is non-enforcing whatever
// became of the sandboxed run; with only placeholders on the host, the run's fate stands.
func TestHostEscapeOutlivesTheRun(t *testing.T) {
	fates := []struct {
		name string
		x    harness.Exec
		want model.Outcome // with no escape
	}{
		{"timed out", harness.Exec{Run: proc.Run{TimedOut: true, Exit: -1}}, model.Timeout},
		{"probe killed before it reported", harness.Exec{Run: proc.Run{Exit: 137}, Out: probe.Output{Ran: true}}, model.HarnessError},
		{"SANDBOX-RAN marker lost", harness.Exec{Run: proc.Run{Exit: 0}}, model.HarnessError},
		{"sandbox crashed", harness.Exec{Run: proc.Run{Exit: 1, Stderr: "bwrap: something"}}, model.SandboxFailed},
		{"agent saved the output to a file", harness.Exec{Run: proc.Run{Exit: 0}, Out: probe.Output{Ran: true},
			ParseErr: errors.New("Claude Code did not hand back the whole output")}, model.HarnessError},
	}
	for _, name := range []string{"protected/gitconfig", "protected/mcp-json", "protected/vscode", "protected/claude-commands", "protected/git-hooks-new-repo", "escape/hardlink"} {
		for _, f := range fates {
			t.Run(name+"/"+f.name, func(t *testing.T) {
				_, plans := freshLayout(t)
				plans = plans[:slices.IndexFunc(plans, func(p fsplan.Plan) bool { return strings.HasPrefix(p.Check.Name, "fs-interplay/") })]
				p := planNamed(t, plans, name)
				perform(t, p.Check)
				x := f.x
				ft := &Trial{}
				judge(ft, &x, plans, fsplan.Skipped{}, hostToken)
				if c := ft.Result.Checks[name]; c.Outcome != model.NonEnforcing || ft.Result.Outcome != model.NonEnforcing {
					t.Fatalf("host shows the escape, run %s: trial %s (%s), check %+v", f.name, ft.Result.Outcome, ft.Result.Hint, c)
				}
				if !slices.Contains(ft.Escaped, name) {
					t.Errorf("escaped %v lacks %s", ft.Escaped, name)
				}
			})
		}
	}
	for _, f := range fates {
		t.Run("placeholders only/"+f.name, func(t *testing.T) {
			dir, plans := freshLayout(t)
			plans = plans[:slices.IndexFunc(plans, func(p fsplan.Plan) bool { return strings.HasPrefix(p.Check.Name, "fs-interplay/") })]
			ws := filepath.Join(dir, "workspace")
			os.WriteFile(filepath.Join(ws, ".mcp.json"), nil, 0o644)
			os.WriteFile(filepath.Join(ws, ".gitconfig"), nil, 0o644)
			os.MkdirAll(filepath.Join(ws, ".claude", "commands"), 0o755)
			os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755)
			x := f.x
			ft := &Trial{}
			judge(ft, &x, plans, fsplan.Skipped{}, hostToken)
			if ft.Result.Outcome != f.want || len(ft.Escaped) > 0 {
				t.Fatalf("placeholders, run %s: %s (%s), escaped %v; want %s", f.name, ft.Result.Outcome, ft.Result.Hint, ft.Escaped, f.want)
			}
		})
	}
}

// TestProtectedWriteInsideIsABreach: the host check adds evidence, it takes none away. A
// protected file or hard link the probe made inside is non-enforcing even when the host never
// saw it (a private mount): writing it at all is the breach, never "contained".
func TestProtectedWriteInsideIsABreach(t *testing.T) {
	for _, name := range []string{"protected/gitconfig", "protected/mcp-json", "protected/vscode", "protected/claude-commands", "protected/git-hooks-new-repo", "escape/hardlink"} {
		t.Run(name, func(t *testing.T) {
			_, plans := freshLayout(t)
			plans = plans[:slices.IndexFunc(plans, func(p fsplan.Plan) bool { return strings.HasPrefix(p.Check.Name, "fs-interplay/") })]
			obs := &probe.Observation{}
			for _, p := range plans {
				r := probe.FSResult{Name: p.Check.Name, Errno: "EROFS"}
				if p.Check.Name == name {
					r = probe.FSResult{Name: name, OK: true}
				}
				obs.FS = append(obs.FS, r)
			}
			ft := &Trial{}
			na := fsplan.Skipped{}
			for _, n := range []string{"workspace/write", "workspace/mkdir", "workspace/tmpdir"} {
				na.NotApplicable(n, "n/a")
			}
			judge(ft, &harness.Exec{Out: probe.Output{Ran: true, Obs: obs}}, plans, na, hostToken)
			if c := ft.Result.Checks[name]; c.Outcome != model.NonEnforcing || len(ft.Escaped) > 0 {
				t.Fatalf("%s written inside only: %+v, escaped %v", name, c, ft.Escaped)
			}
		})
	}
}

// TestInterplayPathSpellsHomeAndTrial: a check's path in a finding names the fake HOME and the
// trial's directory as $HOME and $TRIAL, so a pin matches every trial's.
func TestInterplayPathSpellsHomeAndTrial(t *testing.T) {
	l := newFSInterplay("/tmp/sandcheck-trial-1")
	ft := &Trial{Policy: l.policy(false), SandboxRun: harness.SandboxRun{Observation: &probe.Observation{FS: []probe.FSResult{
		{Name: "a", Path: l.gitconfig()}, {Name: "b", Path: l.remounted()}, {Name: "c", Path: "/etc/passwd"}}}}}
	for name, want := range map[string]string{"a": "$HOME/proj/sub/.gitconfig", "b": "$TRIAL/remounted", "c": "/etc/passwd", "d": ""} {
		if got := InterplayPath(ft, name); got != want {
			t.Errorf("InterplayPath(%s) = %q, want %q", name, got, want)
		}
	}
}

// TestControlsTakeNoPrivilegedStep: the unsandboxed controls run on the host itself, where a
// remount or an unmount would change the host's own mounts; the privileged checks are in them,
// as their plain operation.
func TestControlsTakeNoPrivilegedStep(t *testing.T) {
	plans := allDeniedPlans("/d")
	privileged := 0
	for _, p := range plans {
		if p.Check.Privileged != "" {
			privileged++
		}
	}
	checks := fsplan.ControlChecks(plans, fsplan.Skipped{})
	if privileged == 0 || len(checks) != len(plans) {
		t.Fatalf("%d privileged plans, %d controls of %d plans", privileged, len(checks), len(plans))
	}
	for _, c := range checks {
		if c.Privileged != "" {
			t.Errorf("%s: the control takes the step %s on the host", c.Name, c.Privileged)
		}
	}
}
