// Package claudecode adapts Claude Code itself (npm @anthropic-ai/claude-code, a native binary
// from its platform package): the seed's own system, not only the runtime under it. The
// sandboxed command reaches the sandbox the way it does for Claude Code's users: the model asks
// the Bash tool to run it. The model is the one stand-in (fixtures/scriptedmodel, on loopback,
// one per run); `claude -p`, its permission checks, its settings files, its trust state and its
// bundled sandbox runtime (bubblewrap and socat from PATH, so PATH-shim faults reach it) are real.
//
// A run: a throwaway HOME with ~/.claude/settings.json made from the policy (sandbox.enabled,
// failIfUnavailable, allowUnsandboxedCommands false, network.allowedDomains, filesystem
// allowWrite/denyRead), the workspace trusted in ~/.claude.json, the workspace as cwd,
// ANTHROPIC_BASE_URL at the scripted model, a dummy key, non-essential traffic and telemetry
// off, then `claude -p PROMPT --allowedTools Bash` (or the permission mode asked for). The
// command's output comes back in the tool result (targets.Agent).
package claudecode

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/versions"
)

// Name of the adapter in matrices and on the command line.
const Name = "claude-code"

// Package is Claude Code's npm package; PlatformPackage holds its native binary on this platform.
const (
	Package         = "@anthropic-ai/claude-code"
	PlatformPackage = "@anthropic-ai/claude-code-linux-x64"
)

// PinnedVersion is the version the adapter runs when none is named: the seed's. `make deps`
// installs it into the npm cache (scripts/install-deps.sh).
const PinnedVersion = "2.1.215"

// EnvPath overrides where the claude executable is.
const EnvPath = config.ClaudeCode

// knownFindings are where the real, healthy Claude Code fails a spec (package knownfindings reads them).
//
//go:embed knownfindings.yaml
var knownFindings []byte

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) {
		return New(s["path"], s["permission_mode"])
	})
	targets.RegisterFindings(Name, targets.Findings{File: "targets/claudecode/knownfindings.yaml", Data: knownFindings})
	// The wrapper's postinstall links the platform binary; the adapter runs that binary itself.
	targets.RegisterNPM(Name, targets.NPM{Package: Package, Bin: "claude"})
}

// Target is the claude-code adapter.
type Target struct {
	path       string // the native binary
	permission string // the target's default permission mode (see Options.Permission)
	verOnce    sync.Once
	ver        string
}

// New finds Claude Code: an explicit path (an install's node_modules/.bin/claude is followed to
// the platform package's native binary), $SANDCHECK_CLAUDE_CODE, then the pinned version in the
// npm cache. permission is the default permission mode of every run ("" = --allowedTools Bash).
func New(path, permission string) (*Target, error) {
	if err := checkPermission(permission); err != nil {
		return nil, fmt.Errorf("claude-code settings.permission_mode: %w", err)
	}
	p, err := Locate(path)
	if err != nil {
		return nil, err
	}
	return &Target{path: p, permission: permission}, nil
}

// Locate resolves the native claude executable.
func Locate(path string) (string, error) {
	if path == "" {
		path = config.Get().Tool(EnvPath)
	}
	if path == "" {
		in, ok := npmcache.New().Lookup(npmcache.Spec{Package: Package, Version: PinnedVersion, Bin: "claude"})
		if !ok {
			return "", fmt.Errorf("claude-code %s is not installed in the npm cache (%s): run `make deps`, "+
				"or name a version (--target claude-code@%s installs it), or set %s", PinnedVersion,
				npmcache.New().Root(), PinnedVersion, EnvPath)
		}
		path = in.BinPath()
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("claude %q: %w", path, err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	return Native(p), nil
}

// Native follows an install's node_modules/.bin/claude to the platform package's binary (the
// wrapper's own bin/claude.exe is a copy made by its postinstall, or a stub without it).
func Native(p string) string {
	nm := filepath.Dir(filepath.Dir(p)) // .../node_modules
	if filepath.Base(filepath.Dir(p)) != ".bin" || filepath.Base(nm) != "node_modules" {
		return p
	}
	c := filepath.Join(nm, filepath.FromSlash(PlatformPackage), "claude")
	if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
		return c
	}
	return p
}

func (t *Target) Name() string { return Name }

// Path is the claude executable in use.
func (t *Target) Path() string { return t.path }

// Starts implements targets.Starter: the claude executable.
func (t *Target) Starts() string { return t.path }

// Capabilities are srt's (Claude Code bundles it), reached through Claude Code's own settings;
// a parent proxy through the caller's HTTP(S)_PROXY, which the bundled runtime takes as its
// parent (withParent).
func (t *Target) Capabilities() []model.Capability {
	return []model.Capability{model.CapProxyAllowList, model.CapWritablePaths, model.CapDenyRead,
		model.CapProtectedFiles, model.CapSettingsFile, model.CapAgentConfig, model.CapDenyReadGlob, model.CapParentProxy, model.CapWeakerNesting}
}

// AgentConfig implements targets.AgentConfigured: Claude Code's project settings, which the next
// session runs under (its sandbox among them).
func (t *Target) AgentConfig() []string {
	return []string{".claude/settings.json", ".claude/settings.local.json"}
}

// Reach is the bundled runtime's: its HTTP proxy (plain and CONNECT) and its SOCKS proxy.
func (t *Target) Reach() []string { return []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS} }

// Seams implements targets.Seamed: the runtime Claude Code bundles runs socat and bwrap from
// its PATH, and its settings (sandbox.network) name its proxy's ports. Not ripgrep: Claude Code
// ships its own.
func (t *Target) Seams() []model.Seam {
	return []model.Seam{model.HelperTool("socat"), model.HelperTool("bwrap"),
		model.OnPath("socat"), model.OnPath("bwrap"), model.ProxyPorts}
}

// Version is "@anthropic-ai/claude-code@X.Y.Z": the platform package's manifest beside the
// binary, else `claude --version` ("2.1.215 (Claude Code)").
func (t *Target) Version() string {
	t.verOnce.Do(func() {
		t.ver = "unknown"
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(t.path), "package.json")); err == nil {
			var pkg struct{ Name, Version string }
			if json.Unmarshal(b, &pkg) == nil && pkg.Version != "" && strings.HasPrefix(pkg.Name, Package) {
				t.ver = Package + "@" + pkg.Version
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, t.path, "--version").Output()
		if err != nil {
			return
		}
		if v := versions.Extract(string(out)); v != "" {
			t.ver = Package + "@" + v
		}
	})
	return t.ver
}
