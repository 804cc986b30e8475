//go:build linux

// Package filesystem runs filesystem trials: a layout of canary secrets, files outside the
// workspace and the files a sandbox protects; each denied check tried first as the sandbox's user
// without the sandbox (what the user cannot do anyway proves nothing), then every check under the
// target; the host side checked for what escaped, and removed. It holds the filesystem scenario
// and the fs-interplay bypass class (interplay.go).
package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	fsverdict "github.com/sandcheck/sandcheck/suites/classify/filesystem"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
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
	// NextSession is how the session after the command's went (the setup class), "" if none ran.
	NextSession string           `json:"next_session,omitempty"`
	Result      fsverdict.Result `json:"result"`
}

// Home is the HOME of the user the sandbox ran as (this process's own for root).
func (ft *Trial) Home() string { return harness.HomeOf(ft.User) }

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
func layout(dir, ws, home, nonce, token string) ([]fsplan.Plan, error) {
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
func fsPlans(dir, ws, home, nonce, token string, files map[string]string) []fsplan.Plan {
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(harness.SecretDir(dir), "id_rsa")
	n := "sandcheck-fs-" + nonce
	w := func(name, path string, allow bool, outsidePath string) fsplan.Plan {
		return fsplan.Plan{Check: probe.FSCheck{Name: name, Op: probe.OpWrite, Path: path, Content: token}, Allow: allow, Outside: outsidePath}
	}
	// md is w for a write that must first create directories inside the workspace.
	md := func(name, path string, allow bool) fsplan.Plan {
		p := w(name, path, allow, "")
		p.Check.Mkdir = true
		return p
	}
	// protected is a denied write of a file srt protects inside the workspace: the workspace is
	// a host directory, so the token there is the escape.
	protected := func(p fsplan.Plan) fsplan.Plan {
		p.Written, p.Strict = p.Check.Path, true
		return p
	}
	hardlink := filepath.Join(ws, "hardlink-"+n)
	plans := []fsplan.Plan{
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
		{Check: probe.FSCheck{Name: "escape/hardlink", Op: probe.OpLink, Path: hardlink, Path2: filepath.Join(outside, "target")},
			Linked: hardlink, Strict: true},
		{Check: probe.FSCheck{Name: "escape/rename-out", Op: probe.OpRename, Path: filepath.Join(ws, "movable"), Path2: filepath.Join(outside, "renamed-"+n)},
			Outside: filepath.Join(outside, "renamed-"+n)},
		{Check: probe.FSCheck{Name: "escape/rename-in", Op: probe.OpRename, Path: filepath.Join(outside, "target2"), Path2: filepath.Join(ws, "stolen-"+n)},
			Gone: filepath.Join(outside, "target2")},
		{Check: probe.FSCheck{Name: "secret/read", Op: probe.OpRead, Path: secret}},
		{Check: probe.FSCheck{Name: "secret/via-symlink", Op: probe.OpRead, Path: filepath.Join(ws, "link-secret")}},
		{Check: probe.FSCheck{Name: "secret/proc-root", Op: probe.OpRead, Path: "/proc/self/root" + secret}},
		{Check: probe.FSCheck{Name: "protected/bashrc", Op: probe.OpAppend, Path: filepath.Join(ws, ".bashrc"), Content: token},
			Changed: filepath.Join(ws, ".bashrc"), Was: files[filepath.Join(ws, ".bashrc")]},
		protected(w("protected/gitconfig", filepath.Join(ws, ".gitconfig"), false, "")),
		protected(w("protected/mcp-json", filepath.Join(ws, ".mcp.json"), false, "")),
		fsplan.Created("protected/vscode", filepath.Join(ws, ".vscode", "settings.json"), token),
		fsplan.Created("protected/claude-commands", filepath.Join(ws, ".claude", "commands", "evil.md"), token),
		{Check: probe.FSCheck{Name: "protected/git-hooks", Op: probe.OpWrite, Path: filepath.Join(ws, ".git", "hooks", "pre-commit"), Content: token},
			Changed: filepath.Join(ws, ".git", "hooks", "pre-commit"), Was: files[filepath.Join(ws, ".git", "hooks", "pre-commit")]},
		{Check: probe.FSCheck{Name: "protected/git-config", Op: probe.OpAppend, Path: filepath.Join(ws, ".git", "config"), Content: token},
			Changed: filepath.Join(ws, ".git", "config"), Was: files[filepath.Join(ws, ".git", "config")]},
		fsplan.Created("protected/git-hooks-new-repo", filepath.Join(ws, "newrepo", ".git", "hooks", "pre-commit"), token),
	}
	return plans
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
			p.RemoveEscape(t.Workspace)
		}
	}()
	na := fsplan.Skipped{}
	for _, p := range plans {
		if why := targets.Lacks(t.Target, fsNeeds(p.Check.Name)); why != "" {
			na.NotApplicable(p.Check.Name, why)
		}
	}
	// Before the sandbox, the same user tries every denied check without it: what fails even
	// then (a user writing /etc) is refused by file permissions, not by the sandbox.
	pre, err := fsplan.Unsandboxed(ctx, t, plans, na, token)
	if err != nil {
		return nil, err
	}
	if err := resetLayout(t, plans, token); err != nil {
		return nil, err
	}
	spec := fsplan.Applicable(plans, na)
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

func judge(ft *Trial, x *harness.Exec, plans []fsplan.Plan, na fsplan.Skipped, token string) {
	// The host side is checked whatever became of the run (timed out, crashed, never reported):
	// an escape it shows is evidence that outweighs all of that.
	in := fsverdict.Input{Session: x.Session()}
	for _, p := range plans {
		e := fsverdict.Expect{Check: p.Check, Allow: p.Allow, Escaped: p.Escaped(), HostChecked: p.HostChecked() && !p.Strict}
		if p.Next {
			e.Next, e.NextSession = true, ft.NextSession
		}
		na.Expect(&e)
		e.Unstaged = p.Late.Missing()
		if p.Check.Op == probe.OpRead {
			e.Secret = token
		}
		if e.Escaped {
			ft.Escaped = append(ft.Escaped, p.Check.Name)
		}
		in.Expect = append(in.Expect, e)
	}
	done := phases.Time(phases.Classify)
	ft.Result = fsverdict.Classify(in)
	done()
}

// resetLayout undoes what the unsandboxed checks did (files written outside, renames, appends,
// directories made) by removing the trial's files and laying them out again, so the sandboxed
// run starts from exactly the state the unsandboxed one did.
func resetLayout(t *harness.Trial, plans []fsplan.Plan, token string) error {
	for _, p := range plans {
		if p.Outside != "" {
			os.RemoveAll(p.Outside)
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
		if p.Outside != "" {
			if _, err := os.Lstat(p.Outside); err == nil {
				return fmt.Errorf("reset layout: %s is still there", p.Outside)
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
		names = append(names, p.Check.Name)
	}
	return names
}
