// Package codex adapts OpenAI's Codex CLI sandbox (npm @openai/codex, which ships its own
// binary): `codex sandbox [-c key=value ...] -- COMMAND` runs COMMAND under the policy Codex's
// agent would use, without a login. On Linux, Codex builds the sandbox itself (its own
// bubblewrap-style namespaces plus seccomp, not the bwrap on PATH), so its fault seam is its
// configuration: the `-c` overrides this adapter generates, which a fault may patch.
//
// Policy: sandbox_mode workspace-write (read-only when nothing is writable) with the workspace
// as the only writable root, /tmp excluded, $TMPDIR a directory of the session's own, and
// network_access=false. Codex has no domain allow-list in this mode: network is all or nothing,
// so the adapter is a deny-all sandbox. It does not hide paths from reading (the root stays
// readable), so it does not claim deny-read.
package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// Name of the adapter in matrices and on the command line.
const Name = "codex"

// ToolsBin is where `make` installs the pinned Codex CLI, relative to the repository root.
const ToolsBin = ".tools/npm-codex/node_modules/.bin/codex"

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return New(s["path"]) })
	// Codex's npm package pulls its native binary in as an optional dependency; its scripts
	// are not needed for that.
	targets.RegisterNPM(Name, targets.NPM{Package: "@openai/codex", Bin: "codex", IgnoreScripts: true})
}

// cli is how the adapter finds codex and its version (`codex --version`, "codex-cli X.Y.Z").
var cli = targets.CLI{Name: "codex", EnvVar: config.Codex, ToolsBin: ToolsBin,
	InstallHint: "run `make deps` (npm @openai/codex into .tools/npm-codex)", Version: func(path string) string {
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}}

// Target is the codex adapter.
type Target struct {
	*targets.Executable
	driveOnce sync.Once
	undriven  string
}

// New finds codex: an explicit path, $SANDCHECK_CODEX, the project's tools dir (searched upward
// from the working directory and from this executable), then PATH.
func New(path string) (*Target, error) {
	exe, err := cli.Find(path)
	if err != nil {
		return nil, err
	}
	return &Target{Executable: exe}, nil
}

// Locate resolves the codex executable.
func Locate(path string) (string, error) { return cli.Locate(path) }

func (t *Target) Name() string { return Name }

// Capabilities are network off and the workspace writable.
func (t *Target) Capabilities() []model.Capability {
	return []model.Capability{model.CapDenyAllNet, model.CapWritablePaths}
}

// Reach is empty: with network_access=false nothing leaves the sandbox.
func (t *Target) Reach() []string { return nil }

// Undrivable says why this build cannot be driven: the adapter runs `codex sandbox`, which early
// releases do not have (0.1.x lists only exec, mcp, proto and debug, with the sandbox as `debug
// landlock`; there `codex sandbox ...` is taken for a prompt). Asked of the build itself, once,
// with a deadline: its `codex --help` must list the sandbox command. "" when it can be driven.
func (t *Target) Undrivable() string {
	t.driveOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, t.Path(), "--help").CombinedOutput()
		switch {
		case ctx.Err() != nil:
			t.undriven = "`codex --help` gave no answer in 15s"
		case err != nil:
			first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			t.undriven = fmt.Sprintf("`codex --help` failed (%v: %s)", err, first)
		case !sandboxCommand.Match(out):
			t.undriven = "this build has no `codex sandbox` command (its `codex --help` lists no sandbox among its commands)"
		}
	})
	return t.undriven
}

// sandboxCommand is the sandbox subcommand's line in `codex --help`'s command list.
var sandboxCommand = regexp.MustCompile(`(?m)^\s+sandbox\s`)

// Config is the configuration a policy becomes, as the nested map Codex's config.toml would hold
// (faults patch it), before it is flattened into -c overrides.
func Config(p targets.Policy) map[string]any {
	if len(p.WritablePaths) == 0 {
		return map[string]any{"sandbox_mode": "read-only"}
	}
	return map[string]any{
		"sandbox_mode": "workspace-write",
		"sandbox_workspace_write": map[string]any{
			"writable_roots":         append([]string{}, p.WritablePaths...),
			"network_access":         false,
			"exclude_slash_tmp":      true,
			"exclude_tmpdir_env_var": false,
		},
	}
}

// Overrides flattens a config map into sorted `-c key=value` arguments, values as TOML (JSON's
// strings, numbers, booleans and arrays of strings are valid TOML).
func Overrides(cfg map[string]any) []string {
	flat := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			b, _ := json.Marshal(v)
			flat[prefix+k] = string(b)
		}
	}
	walk("", cfg)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, "-c", k+"="+flat[k])
	}
	return out
}

// AccountHome implements targets.AccountHomed.
func (t *Target) AccountHome() string {
	return "Codex keeps its state under $HOME/.codex and refuses a HOME under /tmp, where trial directories usually are"
}

// Prepare returns `codex sandbox -c ... -- COMMAND`, run in the workspace (Codex takes its
// working directory as the sandbox's cwd). TMPDIR is a directory of the session's own, which
// Codex keeps writable. Codex keeps state under $HOME/.codex (or $CODEX_HOME), which must not be
// under /tmp.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	env := s.Env
	home := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	if home == "/tmp" || strings.HasPrefix(home, "/tmp/") {
		return nil, fmt.Errorf("codex: HOME=%s is under /tmp, where Codex refuses to keep its state; use a HOME outside /tmp", home)
	}
	if s.Dir != "" {
		tmp := filepath.Join(s.Dir, "codex-tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, fmt.Errorf("codex tmp: %w", err)
		}
		env = targets.SetEnv(env, "TMPDIR", tmp)
	}
	cfg := Config(s.Policy)
	for _, patch := range s.Patches {
		patch(cfg)
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	argv := append(append([]string{t.Path(), "sandbox"}, Overrides(cfg)...), "--")
	argv = append(argv, s.Command...)
	return &targets.Invocation{Argv: argv, Env: env, Dir: s.Workspace, Settings: string(b)}, nil
}
