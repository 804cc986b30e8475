// Package codex adapts OpenAI's Codex CLI sandbox (npm @openai/codex, which ships its own
// binary): `codex sandbox [-c key=value ...] -- COMMAND` runs COMMAND under the policy Codex's
// agent would use, without a login. On Linux, Codex builds the sandbox itself (its own
// bubblewrap-style namespaces plus seccomp, not the bwrap on PATH), so its fault seam is its
// configuration: the `-c` overrides this adapter generates, which a fault may patch.
//
// Policy: sandbox_mode workspace-write with the workspace as the only writable root, /tmp
// excluded and $TMPDIR a directory of the session's own. The network takes one of two shapes
// (the target setting `network`):
//
//   - proxy (the default): Codex's allow-list proxy (the experimental feature network_proxy,
//     from codex-rs/network-proxy). Codex unshares the network, relays 127.0.0.1 ports inside
//     to its own host-side HTTP and SOCKS5 listeners, and injects HTTP(S)_PROXY and ALL_PROXY;
//     network.allowed_domains and network.denied_domains are the policy. The proxy resolves and
//     dials names on the host side, in the trial's mount namespace, where the trial's hosts
//     file and fixture resolver answer.
//   - deny-all: network_access=false, network all or nothing (what Codex builds without the
//     feature offer), and read-only when nothing is writable.
//
// It does not hide paths from reading (the root stays readable), so it does not claim deny-read.
package codex

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/netip"
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
	"github.com/sandcheck/sandcheck/versions"
)

// Name of the adapter in matrices and on the command line.
const Name = "codex"

// ToolsBin is where `make` installs the pinned Codex CLI, relative to the repository root.
const ToolsBin = ".tools/npm-codex/node_modules/.bin/codex"

// knownFindings are where the real, healthy Codex fails a spec (package knownfindings reads them).
//
//go:embed knownfindings.yaml
var knownFindings []byte

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return NewWith(s["path"], s["network"]) })
	targets.RegisterFindings(Name, targets.Findings{File: "targets/codex/knownfindings.yaml", Data: knownFindings})
	targets.RegisterCheck(Name, func(s map[string]string) error { _, err := mode(s["network"]); return err })
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

// The network shapes (the target setting `network`; see the package comment).
const (
	NetworkProxy   = "proxy"
	NetworkDenyAll = "deny-all"
)

// Feature is the Codex feature flag that turns its allow-list proxy on.
const Feature = "network_proxy"

// mode reads the `network` setting: "" is the default, the proxy.
func mode(s string) (string, error) {
	switch s {
	case "", NetworkProxy:
		return NetworkProxy, nil
	case NetworkDenyAll:
		return s, nil
	}
	return "", fmt.Errorf("codex settings.network: %q is not one of %s, %s", s, NetworkProxy, NetworkDenyAll)
}

// Target is the codex adapter.
type Target struct {
	*targets.Executable
	network   string // NetworkProxy or NetworkDenyAll
	driveOnce sync.Once
	undriven  string
	// sandbox is the subcommand that runs a command under the sandbox: ["sandbox"], or
	// ["sandbox", "linux"] in the releases whose `codex sandbox` takes a platform first
	// (up to 0.133: macos, linux, windows).
	sandbox []string
}

// New finds codex (see NewWith) in its default shape, the allow-list proxy.
func New(path string) (*Target, error) { return NewWith(path, "") }

// NewWith finds codex: an explicit path, $SANDCHECK_CODEX, the project's tools dir (searched
// upward from the working directory and from this executable), then PATH; network is the
// shape of its network policy ("" for the default).
func NewWith(path, network string) (*Target, error) {
	m, err := mode(network)
	if err != nil {
		return nil, err
	}
	exe, err := cli.Find(path)
	if err != nil {
		return nil, err
	}
	return &Target{Executable: exe, network: m}, nil
}

// Network is the shape of the target's network policy (NetworkProxy or NetworkDenyAll).
func (t *Target) Network() string { return t.network }

// Locate resolves the codex executable.
func Locate(path string) (string, error) { return cli.Locate(path) }

func (t *Target) Name() string { return Name }

// Capabilities are the allow-list proxy (or network off) and the workspace writable; each of
// laterClaims from the release that first expresses it.
func (t *Target) Capabilities() []model.Capability {
	if t.network == NetworkDenyAll {
		return []model.Capability{model.CapDenyAllNet, model.CapWritablePaths, model.CapAgentConfig}
	}
	c := []model.Capability{model.CapProxyAllowList, model.CapWritablePaths, model.CapMethodRules, model.CapDenyList, model.CapAgentConfig, model.CapParentProxy}
	v, err := versions.Parse(versions.Extract(t.Version()))
	for _, l := range laterClaims {
		// A build of unknown version is taken for a new one.
		if err != nil || versions.Compare(v, l.since) >= 0 {
			c = append(c, l.capability)
		}
	}
	return c
}

// AgentConfig implements targets.AgentConfigured: Codex's project configuration, which the next
// session runs under.
func (t *Target) AgentConfig() []string { return []string{".codex/config.toml"} }

// ClaimedFrom implements targets.ClaimHistory: each of laterClaims from the first release that
// can be judged on it.
func (t *Target) ClaimedFrom(c model.Capability) string {
	for _, l := range laterClaims {
		if l.capability == c {
			return l.since.String()
		}
	}
	return ""
}

// laterClaims are the capabilities Codex's proxy claims only from a release on, each measured
// here on every release from 0.131.0:
//   - private-guard from 0.146.0, the first whose guard against local and private addresses lets
//     an allow-listed IP literal through (0.131.0 to 0.145.0 refuse it as well: HTTP 502, SOCKS5
//     reply 5), so the first that can express a policy of allowed addresses with the guard on
//     (bypass/private-addresses);
//   - https-interception from 0.142.0, the first whose reading-methods-only mode reads HTTPS and
//     reaches an allowed host over TLS with the CA its host gives it: 0.131.0 and 0.132.0 refuse
//     every CONNECT there (403, blocked-by-mitm-required), 0.133.0 to 0.141.0 answer the allowed
//     host over TLS with 502 (bypass/methods/post-https's control).
var laterClaims = []struct {
	capability model.Capability
	since      versions.Version
}{
	{model.CapPrivateGuard, versions.MustParse("0.146.0")},
	{model.CapHTTPSInterception, versions.MustParse("0.142.0")},
}

// Reach lists Codex's ways out: its HTTP proxy (plain and CONNECT) and its SOCKS5 proxy
// (ALL_PROXY=socks5h://...); nothing with network_access=false.
func (t *Target) Reach() []string {
	if t.network == NetworkDenyAll {
		return nil
	}
	return []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}
}

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
		case t.network == NetworkProxy:
			t.undriven = t.proxyUndrivable()
		}
		t.sandbox = t.sandboxArgs()
	})
	return t.undriven
}

// sandboxArgs asks the build how its sandbox command takes a command: releases up to 0.133
// list platforms under `codex sandbox` (linux, macos, windows) and refuse a command there
// ("unrecognized subcommand").
func (t *Target) sandboxArgs() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, t.Path(), "sandbox", "--help").CombinedOutput()
	if platformCommand.Match(out) {
		return []string{"sandbox", "linux"}
	}
	return []string{"sandbox"}
}

// platformCommand is the linux platform's line in an older `codex sandbox --help`.
var platformCommand = regexp.MustCompile(`(?m)^\s+linux\s`)

// sandboxCommand returns the subcommand that runs a command under the sandbox (see sandbox).
func (t *Target) sandboxCommand() []string {
	t.Undrivable() // asks the build once
	return t.sandbox
}

// proxyUndrivable asks the build whether it has the allow-list proxy: `codex features list`
// must list network_proxy. Builds before the feature have no allow-list; the deny-all shape
// drives them.
func (t *Target) proxyUndrivable() string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Path(), "features", "list")
	// Codex reads its config from CODEX_HOME; an empty one of its own keeps a user's out.
	home, err := os.MkdirTemp("", "sandcheck-codex-features-")
	if err != nil {
		return fmt.Sprintf("cannot ask `codex features list`: %v", err)
	}
	defer os.RemoveAll(home)
	cmd.Env = targets.SetEnv(os.Environ(), "CODEX_HOME", home)
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return "`codex features list` gave no answer in 15s"
	case err != nil:
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return fmt.Sprintf("this build has no allow-list proxy: `codex features list` failed (%v: %s) (the deny-all shape, settings network: deny-all, drives it)", err, first)
	case !featureLine.Match(out):
		return "this build has no allow-list proxy: `codex features list` does not list " + Feature + " (the deny-all shape, settings network: deny-all, drives it)"
	}
	return ""
}

// featureLine is the proxy's line in `codex features list` ("network_proxy  experimental  false").
var featureLine = regexp.MustCompile(`(?m)^` + Feature + `\s`)

// sandboxCommand is the sandbox subcommand's line in `codex --help`'s command list.
var sandboxCommand = regexp.MustCompile(`(?m)^\s+sandbox\s`)

// Config is the configuration a policy becomes in the deny-all shape, as the nested map Codex's
// config.toml would hold (faults patch it), before it is flattened into -c overrides.
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

// Seams implements targets.Seamed: Codex's configuration (the -c overrides) is its one seam.
func (t *Target) Seams() []model.Seam { return []model.Seam{model.SettingsFormat("codex")} }

// Unjudged implements targets.Unjudgeable: Codex refuses names that resolve to local or
// private addresses unless allow_local_binding is on, and it counts the fixture's range
// (198.18.0.0/15) as private. The proxy shape turns it on whenever an allowed host is a name, so
// the guard the resolved-address class tests is off by configuration there, and so is it for
// the parent-proxy class's names that resolve to loopback and to the metadata address.
func (t *Target) Unjudged(class string) string {
	guarded := class == "bypass/resolved-address" || strings.HasPrefix(class, "bypass/parent-proxy/rebind-")
	if t.network == NetworkProxy && guarded {
		return "codex's guard against allowed names resolving to local or private addresses is off here " +
			"(allow_local_binding = true): Codex counts the fixture's addresses (198.18.0.0/15) as private, and with the guard on " +
			"it refuses every name resolving into the fixture, the allowed ones too (not_allowed_local); bypass/private-addresses tests the guard on"
	}
	return ""
}

// Profile is the name of the permissions profile the proxy shape defines.
const Profile = "sandcheck"

// ProxyConfig is the configuration a policy becomes in the proxy shape: a permissions profile of
// sandcheck's own (Codex 0.171 reads its network policy only from a profile; the older
// network.allowed_domains keys are accepted and ignored) whose filesystem is the root readable,
// the writable paths and $TMPDIR writable (the working directory, when writable, its project
// root), and whose network is Codex's proxy
// (features.network_proxy) allowing the allowed hosts, denying the denied ones (deny wins).
// allow_local_binding is on where an allowed host is a name: the fixture's addresses
// (198.18.0.0/15) are in a range Codex counts as private, and without it no allowed name would
// resolve to anything Codex dials (an allowed IP literal passes the guard as it is).
// An empty domain table blocks everything (Codex's own rule).
func ProxyConfig(p targets.Policy, workspace string) map[string]any {
	fs := map[string]any{":root": "read", ":tmpdir": "write"}
	for _, w := range p.WritablePaths {
		fs[w] = "write"
		if workspace == w || strings.HasPrefix(workspace, w+"/") {
			// The working directory is the project root, as Codex's own profiles write it
			// (":project_roots" "." = "write"): Codex keeps .codex and .git read-only only under
			// project roots (a path made writable alone leaves them writable: measured, 0.171.0).
			fs[":project_roots"] = map[string]any{".": "write"}
		}
	}
	domains := map[string]any{}
	local := false // IP literals pass the private-address guard when listed; names do not
	for _, h := range p.AllowedHosts {
		domains[h] = "allow"
		if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err != nil {
			local = !p.RefusePrivate
		}
	}
	for _, h := range p.DeniedHosts {
		domains[h] = "deny"
	}
	network := map[string]any{
		"enabled":             true,
		"allow_local_binding": local,
		"domains":             domains,
	}
	if p.ReadOnlyMethods {
		network["mode"] = "limited" // GET, HEAD and OPTIONS only; CONNECT only under its MITM
	}
	return map[string]any{
		"default_permissions": Profile,
		"features":            map[string]any{Feature: true},
		"permissions":         map[string]any{Profile: map[string]any{"filesystem": fs, "network": network}},
	}
}

// Overrides flattens a config map into sorted `-c key=value` arguments, values as TOML: a table
// whose keys are all bare TOML keys becomes dotted paths; one with any other key (a path, a
// domain name) is one inline table, since -c splits its path at dots.
func Overrides(cfg map[string]any) []string {
	flat := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && allBare(sub) {
				walk(prefix+k+".", sub)
				continue
			}
			flat[prefix+k] = tomlValue(v)
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

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func allBare(m map[string]any) bool {
	for k := range m {
		if !bareKey.MatchString(k) {
			return false
		}
	}
	return true
}

// tomlValue writes v as a TOML value: JSON's strings, numbers, booleans and arrays are valid
// TOML; objects become inline tables with quoted keys, sorted.
func tomlValue(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		q, _ := json.Marshal(k)
		parts[i] = string(q) + "=" + tomlValue(m[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// AccountHome implements targets.AccountHomed.
func (t *Target) AccountHome() string {
	return "Codex keeps its state under $HOME/.codex and refuses a HOME under /tmp, where trial directories usually are"
}

// Prepare returns `codex sandbox -c ... -- COMMAND`, run in the workspace (Codex takes its
// working directory as the sandbox's cwd). TMPDIR is a directory of the session's own, which
// Codex keeps writable. Codex keeps state under $HOME/.codex (or $CODEX_HOME), which must not be
// under that TMPDIR.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	env, cfg, err := t.configure(s)
	if err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	argv := append(append(append([]string{t.Path()}, t.sandboxCommand()...), Overrides(cfg)...), "--")
	argv = append(argv, s.Command...)
	return &targets.Invocation{Argv: argv, Env: env, Dir: s.Workspace, Settings: string(b)}, nil
}

// configure is what every Codex command takes of a session: its environment (a HOME Codex
// accepts, a TMPDIR of the session's own) and the configuration its policy becomes, with the
// faults' patches applied.
func (t *Target) configure(s *targets.Session) ([]string, map[string]any, error) {
	env := s.Env
	home := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	// Codex will not keep its state ($HOME/.codex) under its temp dir: the session's own TMPDIR,
	// or /tmp without one.
	tmp := "/tmp"
	if s.Dir != "" {
		tmp = filepath.Join(s.Dir, "codex-tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, nil, fmt.Errorf("codex tmp: %w", err)
		}
		env = targets.SetEnv(env, "TMPDIR", tmp)
	}
	if p := s.Policy.ParentProxy; p != "" {
		for _, k := range model.CallerProxyVars {
			env = targets.SetEnv(env, k, p)
		}
	}
	if home == tmp || strings.HasPrefix(home, tmp+"/") {
		return nil, nil, fmt.Errorf("codex: HOME=%s is under Codex's TMPDIR (%s), where Codex refuses to keep its state; use a HOME outside it", home, tmp)
	}
	cfg := Config(s.Policy)
	if t.network == NetworkProxy {
		cfg = ProxyConfig(s.Policy, s.Workspace)
	}
	for _, patch := range s.Patches {
		patch(cfg)
	}
	return env, cfg, nil
}
