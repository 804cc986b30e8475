//go:build linux

package filesystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	fsverdict "github.com/sandcheck/sandcheck/suites/classify/filesystem"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/harness/ownbinary"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// The fs-interplay bypass class: filesystem rules that meet. A path both read- and
// write-denied, read-denied directories and files inside a writable tree (and the renames and
// links that would carry them out from under their mask), and the files a sandbox protects,
// with the command run from a subdirectory of a writable HOME. The git class, in the same
// session: the configuration files of repositories below the working directory, which the
// next `git status` outside would execute (core.fsmonitor), wherever git looks for them: a
// nested repository's, one deeper than a sandbox's scan for them reaches, a submodule's (under
// its superproject's .git/modules), a repository the command creates, a bare repository's, and
// a linked worktree's .git pointer file. The persistence class: the files that configure a
// later session. The privilege class, last: a command that kept CAP_SYS_ADMIN over its mounts
// unmounts what covers a protected file and a read-denied directory, and remounts the read-only mount
// over a file outside read-write. The host side decides, as in the filesystem scenario: a file
// that moved, appeared or changed on the host is an escape.

// Classes of the checks the trial runs.
const (
	ClassInterplay   = "fs-interplay"
	ClassGit         = "git"
	ClassPersistence = "persistence"
	ClassPrivilege   = "privilege"
	ClassUserns      = "userns"
)

// shellFiles are the login and shell start-up files a next session sources, which the layout
// gives the working directory (as a HOME would hold them) and a check each appends to.
var shellFiles = []struct{ name, file string }{
	{"profile", ".profile"}, {"bash-profile", ".bash_profile"}, {"zshrc", ".zshrc"}, {"zprofile", ".zprofile"},
}

// configFiles configure a later session of a tool, or of the sandbox's agent itself: each check
// creates one in the working directory. needs is what a target must claim for it to apply.
var configFiles = []struct {
	name, file string
	needs      model.Capability
}{
	{"gitmodules", ".gitmodules", model.CapProtectedFiles},
	{"ripgreprc", ".ripgreprc", model.CapProtectedFiles},
	{"idea", filepath.Join(".idea", "workspace.xml"), model.CapProtectedFiles},
	{"claude-agents", filepath.Join(".claude", "agents", "helper.md"), model.CapProtectedFiles},
	{"claude-settings", filepath.Join(".claude", "settings.json"), model.CapAgentConfig},
	{"claude-settings-local", filepath.Join(".claude", "settings.local.json"), model.CapAgentConfig},
	{"codex-config", filepath.Join(".codex", "config.toml"), model.CapAgentConfig},
	{"vscode", filepath.Join(".vscode", "settings.json"), model.CapProtectedFiles},
}

// homeConfigFiles configure every later git run of the user's, wherever it runs: each check
// creates one under the (fake) HOME, as git reads it from $XDG_CONFIG_HOME, ~/.config by default.
var homeConfigFiles = []struct{ name, file string }{
	{"git-xdg-config", filepath.Join(".config", "git", "config")},
}

// fsInterplay is the layout of one trial: a fake HOME, writable as a whole, with a repository
// in it and the command's working directory two levels down.
type fsInterplay struct {
	home, repo, ws string
	// install is the sandbox's installation the session runs a copy of (ownbinary.go); zero
	// where it has none a project would carry.
	install ownbinary.Installation
}

func newFSInterplay(dir string) fsInterplay {
	home := filepath.Join(dir, "fakehome")
	repo := filepath.Join(home, "proj")
	return fsInterplay{home: home, repo: repo, ws: filepath.Join(repo, "sub")}
}

// Repositories below the working directory: near (its config within any scan), a submodule of
// near's (its gitdir under near/.git/modules, its checkout a .git file pointing there), deep
// (its config five path elements down, past srt's default scan depth of 3: ripgrep lists files
// to depth 4), and fresh, which the command creates.
func (l fsInterplay) near() string       { return filepath.Join(l.ws, "near") }
func (l fsInterplay) submodule() string  { return filepath.Join(l.near(), ".git", "modules", "m") }
func (l fsInterplay) deep() string       { return filepath.Join(l.ws, "d1", "d2", "d3") }
func (l fsInterplay) freshConf() string  { return filepath.Join(l.ws, "fresh", ".git", "config") }
func (l fsInterplay) nearConf() string   { return filepath.Join(l.near(), ".git", "config") }
func (l fsInterplay) moduleConf() string { return filepath.Join(l.submodule(), "config") }
func (l fsInterplay) deepConf() string   { return filepath.Join(l.deep(), ".git", "config") }

// A bare repository in the working directory (its config at its top, no .git in its path: git
// reads it when run inside, and core.worktree there gives it a work tree whose `git status`
// runs core.fsmonitor), and a linked worktree of near's, whose .git is a file naming its gitdir:
// a command that points it at a directory of its own makes the next git there run its config.
func (l fsInterplay) bareConf() string { return filepath.Join(l.ws, "bare.git", "config") }
func (l fsInterplay) worktree() string { return filepath.Join(l.ws, "w") }

// remounted is a file outside the writable HOME (in the trial's directory, which the user
// owns) that only a remount of the read-only mount over it would let the command write; the
// workspace's .gitconfig is one of the files a sandbox protects by a mount of its own.
func (l fsInterplay) remounted() string { return filepath.Join(filepath.Dir(l.home), "remounted") }
func (l fsInterplay) gitconfig() string { return filepath.Join(l.ws, ".gitconfig") }

// Paths of the layout's denied files.
func (l fsInterplay) both() string    { return filepath.Join(l.ws, "both", "secret.key") }
func (l fsInterplay) private() string { return filepath.Join(l.ws, "private") }
func (l fsInterplay) creds() string   { return filepath.Join(l.ws, "creds") }
func (l fsInterplay) token() string   { return filepath.Join(l.creds(), "token") }

// policy is what the trial asks of the sandbox; the globs class's patterns only of a sandbox
// that takes patterns.
func (l fsInterplay) policy(globs bool) targets.Policy {
	p := targets.Policy{
		WritablePaths: []string{l.home},
		DenyRead:      []string{l.both(), l.private(), l.token()},
		DenyWrite:     []string{l.both()},
	}
	if globs {
		p.DenyRead = append(p.DenyRead, l.globPolicy()...)
	}
	return p
}

func (l fsInterplay) files(token string) map[string]string {
	canary := "sandcheck-canary " + token + "\n"
	files := map[string]string{
		filepath.Join(l.home, ".bashrc"):                               "# original bashrc\n",
		filepath.Join(l.repo, ".git", "config"):                        "[core]\n",
		filepath.Join(l.repo, ".git", "hooks", "pre-commit"):           "#!/bin/sh\n# original hook\n",
		filepath.Join(l.ws, "README"):                                  "the command runs here, two levels below HOME\n",
		filepath.Join(l.next(), "README"):                              "the next session starts here\n",
		l.gitconfig():                                                  "# original .gitconfig\n",
		l.nearConf():                                                   "[core]\n",
		filepath.Join(l.near(), ".git", "HEAD"):                        "ref: refs/heads/main\n",
		filepath.Join(l.near(), ".gitmodules"):                         "[submodule \"m\"]\n\tpath = m\n\turl = ./m\n",
		l.moduleConf():                                                 "[core]\n\tworktree = ../../../m\n",
		filepath.Join(l.submodule(), "HEAD"):                           "ref: refs/heads/main\n",
		filepath.Join(l.near(), "m", ".git"):                           "gitdir: ../.git/modules/m\n",
		l.deepConf():                                                   "[core]\n",
		filepath.Join(l.deep(), ".git", "HEAD"):                        "ref: refs/heads/main\n",
		l.bareConf():                                                   "[core]\n\tbare = true\n",
		filepath.Join(l.ws, "bare.git", "HEAD"):                        "ref: refs/heads/main\n",
		filepath.Join(l.worktree(), ".git"):                            "gitdir: " + filepath.Join(l.near(), ".git", "worktrees", "w") + "\n",
		filepath.Join(l.near(), ".git", "worktrees", "w", "HEAD"):      "ref: refs/heads/w\n",
		filepath.Join(l.near(), ".git", "worktrees", "w", "commondir"): "../..\n",
		filepath.Join(l.near(), ".git", "worktrees", "w", "gitdir"):    filepath.Join(l.worktree(), ".git") + "\n",
		l.both():                          canary,
		filepath.Join(l.private(), "key"): canary,
		l.token():                         canary,
	}
	for _, f := range shellFiles {
		files[filepath.Join(l.ws, f.file)] = "# original " + f.file + "\n"
	}
	files[l.earlyKey()], files[l.unanchored()] = canary, canary // the globs class's, there from the start
	// A stand-in for the control without a sandbox; the copy replaces it before the session.
	files[l.entryPath()] = "// the sandbox's entry\n"
	// git takes a directory for a repository's only with objects/ and refs/ in it.
	for _, gitdir := range []string{filepath.Join(l.near(), ".git"), l.submodule(), filepath.Join(l.deep(), ".git"), filepath.Join(l.ws, "bare.git")} {
		files[filepath.Join(gitdir, "objects", ".sandcheck")] = ""
		files[filepath.Join(gitdir, "refs", ".sandcheck")] = ""
	}
	return files
}

// layout (re)creates the tree from scratch, the file outside it that a check writes removed.
func (l fsInterplay) layout(token string) error {
	for _, p := range []string{l.home, l.remounted(), l.setupDir()} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("fs-interplay layout: %w", err)
		}
	}
	for p, c := range l.files(token) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("fs-interplay layout: %w", err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return fmt.Errorf("fs-interplay layout: %w", err)
		}
	}
	return l.setupLayout()
}

// InterplayCheck is one check of the trial: its class (ClassInterplay, ClassGit), its
// scenario's last path element, the capability it needs, and its plan.
type InterplayCheck struct {
	Class string
	Name  string
	Needs []model.Capability
	plan  fsplan.Plan
	// agentFile is the working-directory-relative file of an agent-config Check: it applies
	// only to a target whose agent it configures (targets.AgentConfigFiles).
	agentFile string
	// about adds what the plan alone does not say (the rule that covers the path).
	about string
}

func (l fsInterplay) checks(token string) []InterplayCheck {
	files := l.files(token)
	read := func(p string) fsplan.Plan { return fsplan.Plan{Check: probe.FSCheck{Op: probe.OpRead, Path: p}} }
	stolen, linked, moved := filepath.Join(l.ws, "stolen-token"), filepath.Join(l.ws, "linked-token"), filepath.Join(l.ws, "creds-moved")
	planted := filepath.Join(l.private(), "planted")
	dr := []model.Capability{model.CapDenyRead}
	pf := []model.Capability{model.CapProtectedFiles}
	changed := func(op, p string) fsplan.Plan {
		return fsplan.Plan{Check: probe.FSCheck{Op: op, Path: p, Content: token}, Changed: p, Was: files[p]}
	}
	out := []InterplayCheck{
		{Name: "deny-read-and-write", Needs: []model.Capability{model.CapDenyRead, model.CapDenyWrite}, plan: read(l.both())},
		{Name: "deny-read-dir", Needs: dr, plan: read(filepath.Join(l.private(), "key"))},
		{Name: "deny-read-dir-write", Needs: dr,
			plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpWrite, Path: planted, Content: token}, Outside: planted, Strict: true}},
		{Name: "deny-read-file", Needs: dr, plan: read(l.token())},
		{Name: "deny-read-file-link", Needs: dr,
			plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpLink, Path: linked, Path2: l.token()}, Outside: linked}},
		{Name: "deny-read-file-rename", Needs: dr,
			// Decided by the file at its new name only: the parent rename, later in the session,
			// moves the file's directory away whether this rename went through or not.
			plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpRename, Path: l.token(), Path2: stolen}, Outside: stolen}},
		{Name: "deny-read-parent-rename", Needs: dr,
			plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpRename, Path: l.creds(), Path2: moved}, Outside: moved}},
		{Name: "protected-bashrc-from-subdir", Needs: pf, plan: changed(probe.OpAppend, filepath.Join(l.home, ".bashrc"))},
		{Name: "protected-git-hooks-from-subdir", Needs: pf, plan: changed(probe.OpWrite, filepath.Join(l.repo, ".git", "hooks", "pre-commit"))},
		{Name: "protected-git-config-from-subdir", Needs: pf, plan: changed(probe.OpAppend, filepath.Join(l.repo, ".git", "config"))},
		{Class: ClassGit, Name: "nested-repo-config", Needs: pf, plan: changed(probe.OpAppend, l.nearConf())},
		{Class: ClassGit, Name: "submodule-config", Needs: pf, plan: changed(probe.OpAppend, l.moduleConf())},
		{Class: ClassGit, Name: "deep-repo-config", Needs: pf, plan: changed(probe.OpAppend, l.deepConf())},
		{Class: ClassGit, Name: "new-repo-config", Needs: pf, plan: fsplan.Created("", l.freshConf(), token)},
		{Class: ClassGit, Name: "bare-repo-config", Needs: pf, plan: changed(probe.OpAppend, l.bareConf())},
		{Class: ClassGit, Name: "worktree-pointer", Needs: pf, plan: changed(probe.OpWrite, filepath.Join(l.worktree(), ".git"))},
	}
	for _, f := range shellFiles {
		out = append(out, InterplayCheck{Class: ClassPersistence, Name: f.name, Needs: pf, plan: changed(probe.OpAppend, filepath.Join(l.ws, f.file))})
	}
	for _, f := range homeConfigFiles {
		out = append(out, InterplayCheck{Class: ClassPersistence, Name: f.name, Needs: pf, plan: fsplan.Created("", filepath.Join(l.home, f.file), token)})
	}
	own := l.ownBinary(token)
	own.Needs = []model.Capability{model.CapWritablePaths}
	out = append(out, own)
	for _, f := range configFiles {
		c := InterplayCheck{Class: ClassPersistence, Name: f.name, Needs: []model.Capability{f.needs}, plan: fsplan.Created("", filepath.Join(l.ws, f.file), token)}
		if f.needs == model.CapAgentConfig {
			c.agentFile = f.file
		}
		out = append(out, c)
	}
	out = append(out, l.globChecks(token)...)
	out = append(out, l.setupChecks()...)
	privileged := func(step string, p fsplan.Plan) fsplan.Plan { p.Check.Privileged = step; return p }
	// A user namespace of the command's own, where it is root over a mount namespace of its own:
	// the sandbox's mounts come in locked, and must stay so whatever it unmounts or binds there.
	// Each in a child of the probe's, so its mounts change nothing the checks after it see.
	gitconfig, key := changed(probe.OpAppend, l.gitconfig()), read(filepath.Join(l.private(), "key"))
	for _, c := range []struct {
		name, step string
		needs      []model.Capability
		plan       fsplan.Plan
	}{
		{"unmount-protected", probe.PrivUsernsUnmount, pf, gitconfig},
		{"unmount-deny-read", probe.PrivUsernsUnmount, dr, key},
		{"bind-protected", probe.PrivUsernsBind, pf, gitconfig},
		{"bind-deny-read", probe.PrivUsernsBind, dr, key},
		{"open-tree-protected", probe.PrivUsernsOpenTree, pf, gitconfig},
		{"open-tree-deny-read", probe.PrivUsernsOpenTree, dr, key},
	} {
		out = append(out, InterplayCheck{Class: ClassUserns, Name: c.name, Needs: c.needs, plan: privileged(c.step, c.plan)})
	}
	// Last: what a command that kept CAP_SYS_ADMIN over its mounts does to them (srt up to
	// 0.0.65 as root), each step followed by the operation its mount was there to refuse.
	out = append(out,
		// A process in view less confined than the command (a relay the sandbox left without
		// its seccomp filter): taken over, it runs code beyond the filter.
		InterplayCheck{Class: ClassPrivilege, Name: "ptrace-helper", plan: fsplan.Plan{Check: probe.FSCheck{Op: probe.OpPtrace, Path: "/proc"}}},
		InterplayCheck{Class: ClassPrivilege, Name: "unmount-protected", Needs: pf, plan: privileged(probe.PrivUnmount, gitconfig)},
		InterplayCheck{Class: ClassPrivilege, Name: "unmount-deny-read", Needs: dr, plan: privileged(probe.PrivUnmount, key)},
		InterplayCheck{Class: ClassPrivilege, Name: "remount-rw", Needs: []model.Capability{model.CapWritablePaths},
			plan: privileged(probe.PrivRemount, fsplan.Plan{Check: probe.FSCheck{Op: probe.OpWrite, Path: l.remounted(), Content: token}, Outside: l.remounted()})},
	)
	return out
}

// RunInterplay performs one fs-interplay trial: the layout, each denied operation first tried
// without the sandbox as the sandbox's user (what the user cannot do anyway proves nothing),
// the layout again, then every check under the target, from the subdirectory, with HOME the
// fake one. Whatever escaped onto the host is removed with the trial directory.
func RunInterplay(ctx context.Context, cfg harness.Config) (*Trial, error) {
	return runInterplay(ctx, cfg, fsInterplay.checks, nil)
}

// RunNesting performs the nesting class's trial: the fs-interplay layout, its user-namespace
// checks and its ptrace of a less confined process, under the sandbox's weaker mode for nested
// use (targets.Policy.WeakerNesting).
func RunNesting(ctx context.Context, cfg harness.Config) (*Trial, error) {
	return runInterplay(ctx, cfg, fsInterplay.nestingChecks, func(p *targets.Policy) { p.WeakerNesting = true })
}

// runInterplay runs the checks of an fs-interplay layout, the policy changed by weaken when set.
func runInterplay(ctx context.Context, cfg harness.Config, of func(fsInterplay, string) []InterplayCheck, weaken func(*targets.Policy)) (*Trial, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	l := newFSInterplay(t.Dir)
	var noInstall string
	l.install, noInstall = ownbinary.Of(t.Target)
	token := harness.RandomHex(16)
	if err := l.layout(token); err != nil {
		return nil, err
	}
	checks := of(l, token)
	if !slices.ContainsFunc(checks, func(c InterplayCheck) bool { return c.Name == ownBinaryCheck }) {
		l.install = ownbinary.Installation{} // no copy to make, none to run from
	}
	var plans []fsplan.Plan
	na := fsplan.Skipped{}
	if noInstall != "" {
		na.NotApplicable(ownBinaryCheck, noInstall)
	}
	for _, c := range checks {
		c.plan.Check.Name = c.Name
		plans = append(plans, c.plan)
		for _, need := range c.Needs {
			if why := targets.Lacks(t.Target, need); why != "" {
				na.NotApplicable(c.Name, why)
			}
		}
		if own := targets.AgentConfigFiles(t.Target); c.agentFile != "" && targets.Has(t.Target, model.CapAgentConfig) && !slices.Contains(own, c.agentFile) {
			na.NotApplicable(c.Name, fmt.Sprintf("%s configures another agent: %s keeps %s read-only", c.agentFile, t.Target.Name(), strings.Join(own, ", ")))
		}
	}
	if len(na) == len(checks) {
		// Nothing the target can be judged on: no sandbox to start.
		ft := &Trial{Subject: t.Subject(), User: t.Account,
			Result: fsverdict.Result{Outcome: model.NotApplicable, Hint: "no check applies", Checks: map[string]fsverdict.CheckResult{}}}
		for _, c := range checks {
			ft.Result.Checks[c.Name] = fsverdict.CheckResult{Name: c.Name, Outcome: model.NotApplicable, Hint: na.Why(c.Name)}
		}
		return ft, nil
	}
	stop := stageLate(ctx, plans)
	pre, err := fsplan.Unsandboxed(ctx, t, plans, na, token)
	stop()
	if err != nil {
		return nil, err
	}
	if err := l.layout(token); err != nil {
		return nil, err
	}
	if err := l.installCopy(); err != nil {
		return nil, err
	}
	t.Relocate = l.relocate
	if err := t.Account.Chown(t.Dir, harness.RootOwned); err != nil {
		return nil, err
	}
	spec := fsplan.Applicable(plans, na)
	policy := l.policy(targets.Has(t.Target, model.CapDenyReadGlob))
	if weaken != nil {
		weaken(&policy)
	}
	stop = stageLate(ctx, plans)
	x, err := t.Exec(ctx, spec, func(s *targets.Session) {
		s.Policy = policy
		s.Workspace = l.ws
		s.Env = targets.SetEnv(s.Env, "HOME", l.home)
	}, nil)
	stop()
	if err != nil {
		return nil, err
	}
	// The next session starts from the installation itself: its set-up is what the setup class
	// meets, whatever the command did to the copy (the own-binary check decides that).
	t.Relocate = nil
	next, err := runNext(ctx, t, l, plans, na, policy)
	if err != nil {
		return nil, err
	}
	ft := &Trial{Subject: t.Subject(), Policy: policy, Settings: x.Settings, SandboxRun: x.SandboxRun(), User: t.Account, Unsandboxed: pre, NextSession: next}
	judge(ft, x, plans, na, token)
	return ft, nil
}

// InterplayPath is a check's path as findings spell it: the fake HOME as $HOME, the trial's
// directory around it as $TRIAL.
func InterplayPath(ft *Trial, name string) string {
	if ft.Observation == nil {
		return ""
	}
	for _, r := range ft.Observation.FS {
		if r.Name == name {
			if len(ft.Policy.WritablePaths) > 0 {
				home := ft.Policy.WritablePaths[0]
				if rest, ok := strings.CutPrefix(r.Path, home+"/"); ok {
					return "$HOME/" + rest
				}
				if rest, ok := strings.CutPrefix(r.Path, filepath.Dir(home)+"/"); ok {
					return "$TRIAL/" + rest
				}
			}
			return r.Path
		}
	}
	return ""
}
