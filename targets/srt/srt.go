// Package srt adapts Anthropic's sandbox-runtime (npm @anthropic-ai/sandbox-runtime, the `srt`
// CLI): bubblewrap with the network unshared, socat relays on 127.0.0.1:3128 (HTTP) and :1080
// (SOCKS) inside, bridged to host-side proxies that enforce network.allowedDomains.
package srt

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// Name of the adapter in matrices and on the command line.
const Name = "srt"

// ToolsBin is where `make` installs the pinned srt, relative to the repository root.
const ToolsBin = ".tools/npm/node_modules/.bin/srt"

// knownFindings are where the real, healthy srt fails a spec (package knownfindings reads them).
//
//go:embed knownfindings.yaml
var knownFindings []byte

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return New(s["path"]) })
	targets.RegisterFindings(Name, targets.Findings{File: "targets/srt/knownfindings.yaml", Data: knownFindings})
	targets.RegisterNPM(Name, targets.NPM{Package: Package, Bin: "srt", IgnoreScripts: true})
}

// Package is srt's npm package.
const Package = "@anthropic-ai/sandbox-runtime"

// cli is how the adapter finds srt and its version.
var cli = targets.CLI{Name: "srt", EnvVar: config.SRT, ToolsBin: ToolsBin,
	InstallHint: "run `make deps` (npm @anthropic-ai/sandbox-runtime into .tools/npm)", Version: packageVersion}

// Target is the srt adapter.
type Target struct{ *targets.Executable }

// New finds srt: an explicit path, $SANDCHECK_SRT, the project's tools dir (searched upward from
// the working directory and from this executable), then PATH.
func New(path string) (*Target, error) {
	exe, err := cli.Find(path)
	if err != nil {
		return nil, err
	}
	return &Target{exe}, nil
}

// Locate resolves the srt executable.
func Locate(path string) (string, error) { return cli.Locate(path) }

func (t *Target) Name() string { return Name }

// ClaimedFrom implements targets.ClaimHistory: port rules and credentials each from the first
// release that reads them (see History).
func (t *Target) ClaimedFrom(c model.Capability) string {
	for _, s := range History {
		if slices.Contains(s.Claims, c) {
			return s.Since
		}
	}
	return ""
}

// Capabilities are srt's, and those its release claims from some release on (see History).
func (t *Target) Capabilities() []model.Capability {
	c := []model.Capability{model.CapProxyAllowList, model.CapWritablePaths, model.CapDenyRead,
		model.CapProtectedFiles, model.CapSettingsFile, model.CapDenyWrite, model.CapDenyList, model.CapDenyReadGlob,
		model.CapWeakerNesting}
	return append(c, t.Shape().Claims...)
}

// Reach lists srt's ways out: its HTTP proxy (plain and CONNECT) and its SOCKS proxy; nothing direct.
func (t *Target) Reach() []string { return []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS} }

// Seams implements targets.Seamed: srt runs socat, bwrap and ripgrep from its PATH, and its
// settings name its proxy's ports.
func (t *Target) Seams() []model.Seam {
	return []model.Seam{model.HelperTool("socat"), model.HelperTool("bwrap"), model.HelperTool("rg"),
		model.OnPath("socat"), model.OnPath("bwrap"), model.ProxyPorts, model.SettingsFormat("srt")}
}

// packageVersion reads the package manifest beside the CLI (cheaper than starting node).
func packageVersion(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "..", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct{ Name, Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Version == "" {
		return ""
	}
	return pkg.Name + "@" + pkg.Version
}

// Settings builds srt's settings for a policy, merged over a user's own settings file: the
// user's keys are kept, the fixture's allowed hosts are added to theirs, and the workspace is
// added to their writable paths.
func Settings(p targets.Policy, userFile string) (map[string]any, error) {
	s, err := targets.ReadSettings(userFile, "srt settings")
	if err != nil {
		return nil, err
	}
	net := targets.SettingsObject(s, "network")
	targets.SettingsAdd(net, "allowedDomains", p.AllowedHosts)
	targets.SettingsAdd(net, "deniedDomains", p.DeniedHosts)
	fs := targets.SettingsObject(s, "filesystem")
	targets.SettingsAdd(fs, "allowWrite", p.WritablePaths)
	targets.SettingsAdd(fs, "denyRead", p.DenyRead)
	targets.SettingsAdd(fs, "denyWrite", p.DenyWrite)
	if len(p.Credentials) > 0 {
		credentials(targets.SettingsObject(s, "credentials"), p.Credentials)
	}
	if p.ParentProxy != "" {
		net["parentProxy"] = map[string]any{"http": p.ParentProxy, "https": p.ParentProxy}
	}
	if p.WeakerNesting {
		s["enableWeakerNestedSandbox"] = true
	}
	return s, nil
}

// credentials writes a policy's secrets as srt's credentials section: envVars and files, each
// with its mode, and injectHosts where masked.
func credentials(c map[string]any, creds []targets.Credential) {
	for _, cr := range creds {
		e := map[string]any{"mode": "deny"}
		if cr.Mask {
			e["mode"] = "mask"
			if len(cr.InjectHosts) > 0 {
				e["injectHosts"] = cr.InjectHosts
			}
			if cr.PlaintextInject {
				c["allowPlaintextInject"] = true
			}
		}
		key := "files"
		if cr.Env != "" {
			key, e["name"] = "envVars", cr.Env
		} else {
			e["path"] = cr.File
		}
		list, _ := c[key].([]any)
		c[key] = append(list, e)
	}
}

// Shape is how this build is driven (see History).
func (t *Target) Shape() Shape { return ShapeOf(t.Version()) }

// Undrivable says why the adapter cannot drive this build ("" when it can).
func (t *Target) Undrivable() string { return t.Shape().Drivable }

// Prepare writes the settings file and returns `srt --settings FILE -c 'COMMAND'`, or the form
// the build's release takes (see History): the command as the argument list before 0.0.21,
// Claude Code's permission rules as settings in 0.0.1.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	shape := t.Shape()
	inv := &targets.Invocation{Env: s.Env, Dir: s.Workspace}
	cmd := commandArgs(shape, s.Command)
	switch {
	case s.NoSettings:
		inv.Argv = append([]string{t.Path()}, cmd...)
		inv.Settings = "(none: srt's default ~/.srt-settings.json lookup)"
		if shape.Dialect == DialectPermissions {
			inv.Settings = "(none: srt's default ~/.claude/settings.json lookup)"
		}
		return inv, nil
	case s.SettingsFile != "":
		inv.Argv = append([]string{t.Path(), "--settings", s.SettingsFile}, cmd...)
		if b, err := os.ReadFile(s.SettingsFile); err == nil {
			inv.Settings = string(b)
		} else {
			inv.Settings = fmt.Sprintf("(%s: %v)", s.SettingsFile, err)
		}
		return inv, nil
	}
	settings, err := Settings(s.Policy, s.UserSettings)
	if err != nil {
		return nil, err
	}
	if s.Policy.WeakerNesting && slices.Contains(shape.Claims, model.CapNestedUserns) {
		settings["allowNestedUserNamespaces"] = true // an unknown key: older releases refuse it
	}
	for _, patch := range s.Patches {
		patch(settings)
	}
	if shape.Dialect == DialectPermissions {
		settings = Permissions(settings)
	}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode srt settings: %w", err)
	}
	file := filepath.Join(s.Dir, "srt-settings.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, fmt.Errorf("write srt settings: %w", err)
	}
	inv.Argv = append([]string{t.Path(), "--settings", file}, cmd...)
	inv.Settings = string(b)
	return inv, nil
}

// commandArgs hands the command over in the release's form.
func commandArgs(shape Shape, argv []string) []string {
	if shape.Command == CommandJoined {
		// One argument after "--": the release joins its arguments with spaces and runs the
		// result with a shell, so the quoted string arrives intact.
		return []string{"--", targets.ShellJoin(argv)}
	}
	return []string{"-c", targets.ShellJoin(argv)}
}

// Permissions translates srt's settings (network, filesystem) into the Claude Code settings 0.0.1
// reads: allowed and denied domains become WebFetch(domain:...) rules, writable paths Edit(...)
// allow rules, denied writes and reads Edit(...) and Read(...) deny rules; the network keys that
// are not lists (proxy ports, unix sockets, local binding) move under sandbox.network. Keys
// neither dialect knows are kept (0.0.1 ignores them, as srt's own file would be read).
func Permissions(s map[string]any) map[string]any {
	out := map[string]any{}
	var allow, deny []string
	sandboxNet := map[string]any{}
	// Network rules first, then filesystem ones: the rule order must not depend on map order.
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	first := map[string]int{"network": 1, "filesystem": 2} // other keys rank 0: after these
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := first[keys[i]], first[keys[j]]
		if ri != rj {
			return ri != 0 && (rj == 0 || ri < rj)
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		v := s[k]
		switch k {
		case "network":
			net, _ := v.(map[string]any)
			for nk, nv := range net {
				switch nk {
				case "allowedDomains":
					for _, d := range targets.SettingsStrings(nv) {
						allow = append(allow, "WebFetch(domain:"+d+")")
					}
				case "deniedDomains":
					for _, d := range targets.SettingsStrings(nv) {
						deny = append(deny, "WebFetch(domain:"+d+")")
					}
				default:
					sandboxNet[nk] = nv
				}
			}
		case "ignoreViolations", "enableWeakerNestedSandbox":
			targets.SettingsObject(out, "sandbox")[k] = v
		case "filesystem":
			fs, _ := v.(map[string]any)
			for _, p := range targets.SettingsStrings(fs["allowWrite"]) {
				allow = append(allow, "Edit("+p+")")
			}
			for _, p := range targets.SettingsStrings(fs["denyWrite"]) {
				deny = append(deny, "Edit("+p+")")
			}
			for _, p := range targets.SettingsStrings(fs["denyRead"]) {
				deny = append(deny, "Read("+p+")")
			}
		default:
			out[k] = v
		}
	}
	out["permissions"] = map[string]any{"allow": nonNil(allow), "deny": nonNil(deny)}
	sb := targets.SettingsObject(out, "sandbox")
	sb["network"] = sandboxNet
	return out
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
