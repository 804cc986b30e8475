//go:build linux

// Package filesystem runs filesystem trials: a layout of canary secrets, files outside the
// workspace and the files a sandbox protects; each denied check tried first as the sandbox's user
// without the sandbox (what the user cannot do anyway proves nothing), then every check under the
// target; the host side checked for what escaped, and removed. It holds the filesystem scenario
// and the fs-interplay bypass class (interplay.go).
package filesystem

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	fsverdict "github.com/sandcheck/sandcheck/suites/classify/filesystem"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/latefiles"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// Trial is the evidence of one filesystem trial.
type Trial struct {
	harness.Subject
	Policy   targets.Policy  `json:"policy"`
	Settings json.RawMessage `json:"settings,omitempty"`
	harness.SandboxRun
	Escaped []string `json:"escaped,omitempty"` // checks whose effect the host saw
	// User is who the sandbox ran as; Unsandboxed what that user could do without it (each
	// denied check tried first outside any sandbox: one the user cannot do anyway proves
	// nothing about the sandbox, and is not-applicable).
	User        *users.Account   `json:"user,omitempty"`
	Unsandboxed []probe.FSResult `json:"unsandboxed,omitempty"`
	Result      fsverdict.Result `json:"result"`
}

// Home is the HOME of the user the sandbox ran as (this process's own for root).
func (ft *Trial) Home() string { return harness.HomeOf(ft.User) }

// fsPlan is one filesystem check with what the policy says about it and how the host side can
// tell whether it took effect.
type fsPlan struct {
	check probe.FSCheck
	allow bool
	// outside is the host path whose existence after the run proves a denied write escaped;
	// gone is a host path whose disappearance proves it (a rename out of a read-only area).
	outside, gone string
	// changed is a host file whose content must stay as it was.
	changed, was string
	// written is a host file that, holding the check's token, proves a denied write went
	// through. Only the token proves it: a sandbox may leave empty files or directories at the
	// paths it protects (srt's mount points).
	written string
	// linked is a host path that, being the very file check.Path2 is (same inode), proves a
	// denied hard link went through; a copy of the file proves nothing.
	linked string
	// strict: a write that succeeded inside the sandbox is a breach even if the host never saw
	// it (a read-denied directory must not become writable: a tmpfs the command can fill; a
	// protected workspace file must not be writable at all).
	strict bool
	// late is the file the host makes while the command runs (check.Await asks for it).
	late *latefiles.File
}

// fsFiles are the files a filesystem trial starts with: a canary secret, files outside the
// workspace, and the files srt protects inside it.
func fsFiles(dir, ws, token string) map[string]string {
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(harness.SecretDir(dir), "id_rsa")
	return map[string]string{
		secret:                                           "-----BEGIN OPENSSH PRIVATE KEY-----\nsandcheck-canary " + token + "\n",
		filepath.Join(outside, "target"):                 "outside " + token + "\n",
		filepath.Join(outside, "target2"):                "outside2 " + token + "\n",
		filepath.Join(ws, "movable"):                     "movable\n",
		filepath.Join(ws, ".bashrc"):                     "# original bashrc\n",
		filepath.Join(ws, ".git", "config"):              "[core]\n",
		filepath.Join(ws, ".git", "hooks", "pre-commit"): "#!/bin/sh\n# original hook\n",
		filepath.Join(ws, "newrepo", "README"):           "a directory that is not a git repository yet\n",
	}
}

// layout creates the trial's files and the symlinks pointing out of the workspace, and returns
// the plan of checks.
func layout(dir, ws, home, nonce, token string) ([]fsPlan, error) {
	files := fsFiles(dir, ws, token)
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(harness.SecretDir(dir), "id_rsa")
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
		mode := os.FileMode(0o644)
		if p == secret {
			mode = 0o600 // as ssh keeps a private key: its owner's alone
		}
		if err := os.WriteFile(p, []byte(c), mode); err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(ws, "link-out"):    outside,
		filepath.Join(ws, "link-secret"): secret,
	} {
		if err := os.Symlink(target, link); err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
	}
	return fsPlans(dir, ws, home, nonce, token, files), nil
}

// fsPlans is the list of checks, in order. home is the HOME of the sandbox's user.
func fsPlans(dir, ws, home, nonce, token string, files map[string]string) []fsPlan {
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(harness.SecretDir(dir), "id_rsa")
	n := "sandcheck-fs-" + nonce
	w := func(name, path string, allow bool, outsidePath string) fsPlan {
		return fsPlan{check: probe.FSCheck{Name: name, Op: probe.OpWrite, Path: path, Content: token}, allow: allow, outside: outsidePath}
	}
	// md is w for a write that must first create directories inside the workspace.
	md := func(name, path string, allow bool) fsPlan {
		p := w(name, path, allow, "")
		p.check.Mkdir = true
		return p
	}
	// protected is a denied write of a file srt protects inside the workspace: the workspace is
	// a host directory, so the token there is the escape.
	protected := func(p fsPlan) fsPlan {
		p.written, p.strict = p.check.Path, true
		return p
	}
	hardlink := filepath.Join(ws, "hardlink-"+n)
	plans := []fsPlan{
		w("workspace/write", filepath.Join(ws, n), true, ""),
		md("workspace/mkdir", filepath.Join(ws, "sub", "deep", n), true),
		// $TMPDIR as the sandbox sets it inside: srt's own /tmp/claude whatever the trial's
		// TMPDIR (a known finding where /tmp/claude is missing); Claude Code's per-uid directory
		// under the TMPDIR it is given, the trial's.
		w("workspace/tmpdir", "$TMPDIR/"+n, true, ""),
		w("outside/tmp", "/tmp/"+n, false, "/tmp/"+n),
		w("outside/home", filepath.Join(home, n), false, filepath.Join(home, n)),
		w("outside/etc", "/etc/"+n, false, "/etc/"+n),
		w("outside/parent", filepath.Join(dir, n), false, filepath.Join(dir, n)),
		w("escape/symlink", filepath.Join(ws, "link-out", n), false, filepath.Join(outside, n)),
		w("escape/dotdot", filepath.Join(ws, "..", "dotdot-"+n), false, filepath.Join(dir, "dotdot-"+n)),
		w("escape/proc-root", "/proc/self/root"+filepath.Join(outside, "proc-"+n), false, filepath.Join(outside, "proc-"+n)),
		{check: probe.FSCheck{Name: "escape/hardlink", Op: probe.OpLink, Path: hardlink, Path2: filepath.Join(outside, "target")},
			linked: hardlink, strict: true},
		{check: probe.FSCheck{Name: "escape/rename-out", Op: probe.OpRename, Path: filepath.Join(ws, "movable"), Path2: filepath.Join(outside, "renamed-"+n)},
			outside: filepath.Join(outside, "renamed-"+n)},
		{check: probe.FSCheck{Name: "escape/rename-in", Op: probe.OpRename, Path: filepath.Join(outside, "target2"), Path2: filepath.Join(ws, "stolen-"+n)},
			gone: filepath.Join(outside, "target2")},
		{check: probe.FSCheck{Name: "secret/read", Op: probe.OpRead, Path: secret}},
		{check: probe.FSCheck{Name: "secret/via-symlink", Op: probe.OpRead, Path: filepath.Join(ws, "link-secret")}},
		{check: probe.FSCheck{Name: "secret/proc-root", Op: probe.OpRead, Path: "/proc/self/root" + secret}},
		{check: probe.FSCheck{Name: "protected/bashrc", Op: probe.OpAppend, Path: filepath.Join(ws, ".bashrc"), Content: token},
			changed: filepath.Join(ws, ".bashrc"), was: files[filepath.Join(ws, ".bashrc")]},
		protected(w("protected/gitconfig", filepath.Join(ws, ".gitconfig"), false, "")),
		protected(w("protected/mcp-json", filepath.Join(ws, ".mcp.json"), false, "")),
		created("protected/vscode", filepath.Join(ws, ".vscode", "settings.json"), token),
		created("protected/claude-commands", filepath.Join(ws, ".claude", "commands", "evil.md"), token),
		{check: probe.FSCheck{Name: "protected/git-hooks", Op: probe.OpWrite, Path: filepath.Join(ws, ".git", "hooks", "pre-commit"), Content: token},
			changed: filepath.Join(ws, ".git", "hooks", "pre-commit"), was: files[filepath.Join(ws, ".git", "hooks", "pre-commit")]},
		{check: probe.FSCheck{Name: "protected/git-config", Op: probe.OpAppend, Path: filepath.Join(ws, ".git", "config"), Content: token},
			changed: filepath.Join(ws, ".git", "config"), was: files[filepath.Join(ws, ".git", "config")]},
		created("protected/git-hooks-new-repo", filepath.Join(ws, "newrepo", ".git", "hooks", "pre-commit"), token),
	}
	return plans
}

// created is a file the command must not be able to create, its directories with it: the
// workspace is a host directory, and only the token proves the file was written there (a
// sandbox may leave an empty placeholder where it protects a path).
func created(name, path, token string) fsPlan {
	return fsPlan{check: probe.FSCheck{Name: name, Op: probe.OpWrite, Path: path, Content: token, Mkdir: true}, written: path, strict: true}
}

// fsNeeds is the capability a check needs of the target, by its group: workspace confinement
// needs writable paths, the canary secret deny-read, the workspace's own files srt's protection.
func fsNeeds(name string) model.Capability {
	switch {
	case strings.HasPrefix(name, "secret/"):
		return model.CapDenyRead
	case strings.HasPrefix(name, "protected/"):
		return model.CapProtectedFiles
	}
	return model.CapWritablePaths
}

// hostChecked says whether the host side can tell if the check's effect escaped.
func (p fsPlan) hostChecked() bool {
	return p.outside != "" || p.gone != "" || p.changed != "" || p.written != "" || p.linked != ""
}

// escaped reports whether a denied check's effect is visible on the host.
func (p fsPlan) escaped() bool {
	if p.allow {
		return false
	}
	if p.outside != "" {
		if _, err := os.Lstat(p.outside); err == nil {
			return true
		}
	}
	if p.gone != "" {
		if _, err := os.Lstat(p.gone); os.IsNotExist(err) {
			return true
		}
	}
	if p.changed != "" {
		b, err := os.ReadFile(p.changed)
		if err == nil && !bytes.Equal(b, []byte(p.was)) {
			return true
		}
	}
	if p.written != "" && holdsToken(p.written, p.check.Content) {
		return true
	}
	if p.linked != "" && sameFile(p.linked, p.check.Path2) {
		return true
	}
	return false
}

// holdsToken says whether path is a regular file on the host with token in it. Anything else
// there (nothing, an empty placeholder, a directory, a device a sandbox mounted) is no write.
func holdsToken(path, token string) bool {
	if token == "" {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return bytes.Contains(b, []byte(token))
}

// sameFile says whether link and target are one file on the host (a hard link, not a copy).
func sameFile(link, target string) bool {
	a, err := os.Lstat(link)
	if err != nil {
		return false
	}
	b, err := os.Lstat(target)
	return err == nil && os.SameFile(a, b)
}

// removeEscape deletes from the host what the check's escape left there: the file outside, the
// token written into a protected file (and the directories made for it, when empty), the hard
// link (never the outside file it names).
func (p fsPlan) removeEscape(ws string) {
	if p.outside != "" {
		os.RemoveAll(p.outside)
	}
	if p.written != "" && holdsToken(p.written, p.check.Content) {
		os.Remove(p.written)
		for d := filepath.Dir(p.written); strings.HasPrefix(d, ws+"/"); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty: the layout's own, or another check's
			}
		}
	}
	if p.linked != "" && sameFile(p.linked, p.check.Path2) {
		os.Remove(p.linked)
	}
}

// Run performs one filesystem trial under the policy "write only the workspace, do not
// read the secret". Whatever escaped onto the host is removed afterwards.
func Run(ctx context.Context, cfg harness.Config) (*Trial, error) {
	return RunWith(ctx, cfg, nil)
}

// RunWith is Run with a change to the sandboxed session (a target-specific
// scenario's adapter options), applied after the policy.
func RunWith(ctx context.Context, cfg harness.Config, session func(*targets.Session)) (*Trial, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	token := harness.RandomHex(16)
	plans, err := layout(t.Dir, t.Workspace, t.Home(), t.Nonce, token)
	if err != nil {
		return nil, err
	}
	// Escapes that reached the host must not outlive the trial.
	defer func() {
		for _, p := range plans {
			p.removeEscape(t.Workspace)
		}
	}()
	na := skipped{}
	for _, p := range plans {
		if why := targets.Lacks(t.Target, fsNeeds(p.check.Name)); why != "" {
			na.notApplicable(p.check.Name, why)
		}
	}
	// Before the sandbox, the same user tries every denied check without it: what fails even
	// then (a user writing /etc) is refused by file permissions, not by the sandbox.
	pre, err := unsandboxed(ctx, t, plans, na, token)
	if err != nil {
		return nil, err
	}
	if err := resetLayout(t, plans, token); err != nil {
		return nil, err
	}
	spec := applicable(plans, na)
	policy := targets.Policy{WritablePaths: []string{t.Workspace}, DenyRead: []string{harness.SecretDir(t.Dir)}}
	x, err := t.Exec(ctx, spec, func(s *targets.Session) {
		s.Policy = policy
		// outside/home is about the account's real HOME: $HOME is that one, not the trial's.
		s.Env = targets.SetEnv(s.Env, "HOME", t.Home())
		if session != nil {
			session(s)
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	ft := &Trial{Subject: t.Subject(), Policy: policy, Settings: x.Settings, SandboxRun: x.SandboxRun(),
		User: t.Account, Unsandboxed: pre}
	judge(ft, x, plans, na, token)
	if x.Out.Obs != nil {
		removeEscapes(t.Workspace, x.Out.Obs.FS)
	}
	return ft, nil
}

// skipped says why checks are not tried under the sandbox: nothing they showed could be judged.
type skipped map[string]unjudged

type unjudged struct {
	why string
	// broken: the control run without a sandbox failed for a reason that is not a permission
	// (no space, an I/O error, a cross-device rename, a timeout): harness trouble, which says
	// nothing of the sandbox, never not-applicable.
	broken bool
}

// notApplicable marks a check the target cannot express, or the user cannot do anyway.
func (s skipped) notApplicable(name, why string) { s[name] = unjudged{why: why} }

// expect is what the classifier needs of a check's skip.
func (s skipped) expect(e *fsverdict.Expect) {
	switch k, ok := s[e.Check.Name]; {
	case !ok:
	case k.broken:
		e.ControlFailed = k.why
	default:
		e.NotApplicable = k.why
	}
}

// applicable is the probe spec of the checks na leaves to be tried; the others are not tried:
// nothing they show could be judged.
func applicable(plans []fsPlan, na skipped) probe.Spec {
	spec := probe.Spec{}
	for _, p := range plans {
		if _, ok := na[p.check.Name]; ok {
			continue
		}
		spec.FS = append(spec.FS, p.check)
	}
	return spec
}

// judge classifies the sandboxed run x of plans into ft, the checks in na not applicable.
func judge(ft *Trial, x *harness.Exec, plans []fsPlan, na skipped, token string) {
	// The host side is checked whatever became of the run (timed out, crashed, never reported):
	// an escape it shows is evidence that outweighs all of that.
	in := fsverdict.Input{Ran: x.Out.Ran, Obs: x.Out.Obs, ParseErr: x.ParseErr, Exit: x.Run.Exit, Stderr: x.Run.Stderr, TimedOut: x.Run.TimedOut}
	for _, p := range plans {
		e := fsverdict.Expect{Check: p.check, Allow: p.allow, Escaped: p.escaped(), HostChecked: p.hostChecked() && !p.strict}
		na.expect(&e)
		e.Unstaged = p.late.Missing()
		if p.check.Op == probe.OpRead {
			e.Secret = token
		}
		if e.Escaped {
			ft.Escaped = append(ft.Escaped, p.check.Name)
		}
		in.Expect = append(in.Expect, e)
	}
	done := phases.Time(phases.Classify)
	ft.Result = fsverdict.Classify(in)
	done()
}

// unsandboxed runs the denied checks that are still applicable as the trial's user, outside
// any sandbox, and marks the ones that fail not-applicable in na, with the reason. It returns
// what the probe saw. The checks' effects are undone by resetLayout.
func unsandboxed(ctx context.Context, t *harness.Trial, plans []fsPlan, na skipped, token string) ([]probe.FSResult, error) {
	spec := probe.Spec{Nonce: harness.RandomHex(8), FS: controlChecks(plans, na)}
	if len(spec.FS) == 0 {
		return nil, nil
	}
	specFile := filepath.Join(t.Dir, "probe-unsandboxed-"+spec.Nonce+".json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, fmt.Errorf("write probe spec: %w", err)
	}
	if err := t.Account.Chown(t.Dir, harness.RootOwned); err != nil {
		return nil, err
	}
	argv := t.Account.Command([]string{t.ProbeBin, probe.Arg, specFile}, nil)
	run := proc.RunCommand(ctx, argv, t.Env, t.Workspace, spec.Nonce, t.Config.RunTimeout(), t.Config.KillGrace())
	out, err := probe.Parse(run.Stdout, spec.Nonce)
	if err == nil && out.Obs == nil {
		err = fmt.Errorf("no observation")
	}
	if err != nil {
		return nil, fmt.Errorf("unsandboxed checks as %s (exit %d, %s): %w", t.Account, run.Exit, strings.TrimSpace(run.Stderr), err)
	}
	got := map[string]probe.FSResult{}
	for _, r := range out.Obs.FS {
		got[r.Name] = r
	}
	who := "root"
	if !t.Account.IsRoot() {
		who = "user " + t.Account.Name
	}
	for _, c := range spec.FS {
		r, ok := got[c.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("unsandboxed checks as %s: %s not reported", t.Account, c.Name)
		case c.Op == probe.OpRead && r.OK && strings.Contains(r.Data, token):
		case c.Op == probe.OpRead && r.OK:
			na.notApplicable(c.Name, fmt.Sprintf("%s reads %s without any sandbox, but not the canary: the check proves nothing here", who, c.Path))
		case !r.OK && permission(r.Errno):
			na.notApplicable(c.Name, fmt.Sprintf("%s cannot %s %s even without a sandbox (%s): a refusal inside would prove nothing", who, c.Op, c.Path, r.Errno))
		case !r.OK:
			na[c.Name] = unjudged{broken: true, why: fmt.Sprintf("the control without a sandbox failed: %s %s as %s: %s", c.Op, c.Path, who, cmp.Or(r.Errno, r.Err, "no error reported"))}
		}
	}
	return out.Obs.FS, nil
}

// controlChecks are the checks the user tries without a sandbox: the denied ones still
// applicable, each without its privileged step. The control is the operation itself; the step
// would remount or unmount the host's own mounts.
func controlChecks(plans []fsPlan, na skipped) []probe.FSCheck {
	var out []probe.FSCheck
	for _, p := range plans {
		if _, ok := na[p.check.Name]; !p.allow && !ok {
			c := p.check
			c.Privileged, c.Control = "", true
			out = append(out, c)
		}
	}
	return out
}

// permission says whether an errno is a refusal by permission: what the user cannot do anyway,
// so the check is not applicable. Anything else (ENOSPC, EIO, EXDEV, ENOENT, a timeout, no errno
// at all) means the control itself broke.
func permission(errno string) bool {
	switch errno {
	case "EACCES", "EPERM", "EROFS":
		return true
	}
	return false
}

// resetLayout undoes what the unsandboxed checks did (files written outside, renames, appends,
// directories made) by removing the trial's files and laying them out again, so the sandboxed
// run starts from exactly the state the unsandboxed one did.
func resetLayout(t *harness.Trial, plans []fsPlan, token string) error {
	for _, p := range plans {
		if p.outside != "" {
			os.RemoveAll(p.outside)
		}
	}
	for _, d := range []string{t.Workspace, filepath.Join(t.Dir, "outside"), filepath.Join(t.Dir, "home")} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("reset layout: %w", err)
		}
	}
	if err := os.MkdirAll(t.Marks, 0o755); err != nil {
		return fmt.Errorf("reset layout: %w", err)
	}
	if _, err := layout(t.Dir, t.Workspace, t.Home(), t.Nonce, token); err != nil {
		return err
	}
	for _, p := range plans {
		if p.outside != "" {
			if _, err := os.Lstat(p.outside); err == nil {
				return fmt.Errorf("reset layout: %s is still there", p.outside)
			}
		}
	}
	return nil
}

// removeEscapes deletes from the host what the probe created outside the workspace: when the
// sandbox was isolated nothing is there; under a fault (or a sandbox bug) the host must not keep
// it, e.g. a /tmp/claude that would change how the next srt run behaves.
func removeEscapes(ws string, results []probe.FSResult) {
	for _, r := range results {
		if r.Path == "" || strings.HasPrefix(r.Path, ws+"/") || !strings.HasPrefix(r.Path, "/") {
			continue
		}
		if r.OK && !strings.HasPrefix(r.Path, "/proc/") {
			os.Remove(r.Path)
		}
		for _, d := range r.Created { // deepest first, as the probe listed them
			if !strings.HasPrefix(d, ws+"/") {
				os.Remove(d)
			}
		}
	}
}

// CheckNames lists the filesystem checks in order, for specs (one spec per check).
func CheckNames() []string {
	var names []string
	for _, p := range fsPlans("/d", "/d/ws", "/home/u", "n", "t", fsFiles("/d", "/d/ws", "t")) {
		names = append(names, p.check.Name)
	}
	return names
}
