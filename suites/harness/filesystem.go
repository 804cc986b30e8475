//go:build linux

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// FilesystemTrial is the evidence of one filesystem trial.
type FilesystemTrial struct {
	Target        string             `json:"target"`
	TargetVersion string             `json:"target_version"`
	Fault         string             `json:"fault,omitempty"`
	Policy        targets.Policy     `json:"policy"`
	Settings      json.RawMessage    `json:"settings,omitempty"`
	Run           Run                `json:"run"`
	Ran           bool               `json:"sandbox_ran"`
	Observation   *probe.Observation `json:"observation,omitempty"`
	ParseError    string             `json:"parse_error,omitempty"`
	Escaped       []string           `json:"escaped,omitempty"` // checks whose effect the host saw
	Result        classify.FSResult  `json:"result"`
}

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
}

// The secret lives in DIR/home/.ssh: a fake private key holding a random token. Faults that
// tamper with deny-read bindings are told this path.
func secretDir(dir string) string { return filepath.Join(dir, "home", ".ssh") }

// fsFiles are the files a filesystem trial starts with: a canary secret, files outside the
// workspace, and the files srt protects inside it.
func fsFiles(dir, ws, token string) map[string]string {
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(secretDir(dir), "id_rsa")
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
func layout(dir, ws, nonce, token string) ([]fsPlan, error) {
	files := fsFiles(dir, ws, token)
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(secretDir(dir), "id_rsa")
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
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
	return fsPlans(dir, ws, nonce, token, files), nil
}

// fsPlans is the list of checks, in order.
func fsPlans(dir, ws, nonce, token string, files map[string]string) []fsPlan {
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(secretDir(dir), "id_rsa")
	home, _ := os.UserHomeDir()
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
	plans := []fsPlan{
		w("workspace/write", filepath.Join(ws, n), true, ""),
		md("workspace/mkdir", filepath.Join(ws, "sub", "deep", n), true),
		w("workspace/tmpdir", "$TMPDIR/"+n, true, ""),
		w("outside/tmp", "/tmp/"+n, false, "/tmp/"+n),
		w("outside/home", filepath.Join(home, n), false, filepath.Join(home, n)),
		w("outside/etc", "/etc/"+n, false, "/etc/"+n),
		w("outside/parent", filepath.Join(dir, n), false, filepath.Join(dir, n)),
		w("escape/symlink", filepath.Join(ws, "link-out", n), false, filepath.Join(outside, n)),
		w("escape/dotdot", filepath.Join(ws, "..", "dotdot-"+n), false, filepath.Join(dir, "dotdot-"+n)),
		w("escape/proc-root", "/proc/self/root"+filepath.Join(outside, "proc-"+n), false, filepath.Join(outside, "proc-"+n)),
		{check: probe.FSCheck{Name: "escape/hardlink", Op: probe.OpLink, Path: filepath.Join(ws, "hardlink-"+n), Path2: filepath.Join(outside, "target")}},
		{check: probe.FSCheck{Name: "escape/rename-out", Op: probe.OpRename, Path: filepath.Join(ws, "movable"), Path2: filepath.Join(outside, "renamed-"+n)},
			outside: filepath.Join(outside, "renamed-"+n)},
		{check: probe.FSCheck{Name: "escape/rename-in", Op: probe.OpRename, Path: filepath.Join(outside, "target2"), Path2: filepath.Join(ws, "stolen-"+n)},
			gone: filepath.Join(outside, "target2")},
		{check: probe.FSCheck{Name: "secret/read", Op: probe.OpRead, Path: secret}},
		{check: probe.FSCheck{Name: "secret/via-symlink", Op: probe.OpRead, Path: filepath.Join(ws, "link-secret")}},
		{check: probe.FSCheck{Name: "secret/proc-root", Op: probe.OpRead, Path: "/proc/self/root" + secret}},
		{check: probe.FSCheck{Name: "protected/bashrc", Op: probe.OpAppend, Path: filepath.Join(ws, ".bashrc"), Content: token},
			changed: filepath.Join(ws, ".bashrc"), was: files[filepath.Join(ws, ".bashrc")]},
		w("protected/gitconfig", filepath.Join(ws, ".gitconfig"), false, ""),
		w("protected/mcp-json", filepath.Join(ws, ".mcp.json"), false, ""),
		md("protected/vscode", filepath.Join(ws, ".vscode", "settings.json"), false),
		md("protected/claude-commands", filepath.Join(ws, ".claude", "commands", "evil.md"), false),
		{check: probe.FSCheck{Name: "protected/git-hooks", Op: probe.OpWrite, Path: filepath.Join(ws, ".git", "hooks", "pre-commit"), Content: token},
			changed: filepath.Join(ws, ".git", "hooks", "pre-commit"), was: files[filepath.Join(ws, ".git", "hooks", "pre-commit")]},
		{check: probe.FSCheck{Name: "protected/git-config", Op: probe.OpAppend, Path: filepath.Join(ws, ".git", "config"), Content: token},
			changed: filepath.Join(ws, ".git", "config"), was: files[filepath.Join(ws, ".git", "config")]},
		md("protected/git-hooks-new-repo", filepath.Join(ws, "newrepo", ".git", "hooks", "pre-commit"), false),
	}
	return plans
}

// fsNeeds is the capability a check needs of the target, by its group: workspace confinement
// needs writable paths, the canary secret deny-read, the workspace's own files srt's protection.
func fsNeeds(name string) targets.Capability {
	switch {
	case strings.HasPrefix(name, "secret/"):
		return targets.CapDenyRead
	case strings.HasPrefix(name, "protected/"):
		return targets.CapProtectedFiles
	}
	return targets.CapWritablePaths
}

// hostChecked says whether the host side can tell if the check's effect escaped.
func (p fsPlan) hostChecked() bool { return p.outside != "" || p.gone != "" || p.changed != "" }

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
	return false
}

// RunFilesystem performs one filesystem trial under the policy "write only the workspace, do not
// read the secret". Whatever escaped onto the host is removed afterwards.
func RunFilesystem(ctx context.Context, cfg Config) (*FilesystemTrial, error) {
	t, err := newTrial(ctx, cfg, trialOptions{})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	token := randomHex(16)
	plans, err := layout(t.dir, t.ws, t.nonce, token)
	if err != nil {
		return nil, err
	}
	// Escapes that reached the host must not outlive the trial.
	defer func() {
		for _, p := range plans {
			if p.outside != "" {
				os.RemoveAll(p.outside)
			}
		}
	}()
	spec := probe.Spec{}
	na := map[string]string{}
	for _, p := range plans {
		if c := fsNeeds(p.check.Name); !targets.Has(t.target, c) {
			na[p.check.Name] = fmt.Sprintf("%s does not claim %s", t.target.Name(), c)
			continue // not tried: nothing it shows could be judged
		}
		spec.FS = append(spec.FS, p.check)
	}
	policy := targets.Policy{WritablePaths: []string{t.ws}, DenyRead: []string{secretDir(t.dir)}}
	x, err := t.exec(ctx, spec, func(s *targets.Session) { s.Policy = policy }, nil)
	if err != nil {
		return nil, err
	}
	ft := &FilesystemTrial{Target: t.target.Name(), TargetVersion: t.target.Version(), Fault: cfg.Fault,
		Policy: policy, Settings: x.Settings, Run: x.Run, Ran: x.Out.Ran, Observation: x.Out.Obs}
	if x.ParseErr != nil {
		ft.ParseError = x.ParseErr.Error()
	}
	// The host side is checked whatever became of the run (timed out, crashed, never reported):
	// an escape it shows is evidence that outweighs all of that.
	in := classify.FSInput{Ran: x.Out.Ran, Obs: x.Out.Obs, ParseErr: x.ParseErr, Exit: x.Run.Exit, Stderr: x.Run.Stderr, TimedOut: x.Run.TimedOut}
	for _, p := range plans {
		e := classify.FSExpect{Check: p.check, Allow: p.allow, Escaped: p.escaped(), HostChecked: p.hostChecked(), NotApplicable: na[p.check.Name]}
		if p.check.Op == probe.OpRead {
			e.Secret = token
		}
		if e.Escaped {
			ft.Escaped = append(ft.Escaped, p.check.Name)
		}
		in.Expect = append(in.Expect, e)
	}
	done := timePhase(PhaseClassify)
	ft.Result = classify.ClassifyFS(in)
	done()
	if x.Out.Obs != nil {
		removeEscapes(t.ws, x.Out.Obs.FS)
	}
	return ft, nil
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

// FSCheckNames lists the filesystem checks in order, for specs (one spec per check).
func FSCheckNames() []string {
	var names []string
	for _, p := range fsPlans("/d", "/d/ws", "n", "t", fsFiles("/d", "/d/ws", "t")) {
		names = append(names, p.check.Name)
	}
	return names
}
