package model

import (
	"fmt"
	"strings"
)

// Capability is something a sandbox can express.
type Capability string

const (
	CapProxyAllowList Capability = "proxy-allow-list" // domain allow-list enforced by a proxy
	CapDenyAllNet     Capability = "deny-all-network"
	CapWritablePaths  Capability = "writable-paths"
	CapDenyRead       Capability = "deny-read"
	// CapProtectedFiles: the sandbox keeps files inside the writable workspace that configure
	// later programs (.bashrc, .git/hooks, .vscode, .mcp.json ...) read-only, as srt does.
	CapProtectedFiles Capability = "protected-files"
	// CapSettingsFile: the sandbox reads its policy from a settings file of its own, which a
	// user can get wrong (missing, empty, invalid): the untrusted-configuration scenario.
	CapSettingsFile Capability = "settings-file"
	// CapPortRules: allow-list entries can name a port (host:port), so other ports of an
	// allowed host stay closed.
	CapPortRules Capability = "port-rules"
	// CapDenyWrite: paths inside a writable one can be kept read-only (Policy.DenyWrite).
	CapDenyWrite Capability = "deny-write"
	// CapMethodRules: the proxy can let only reading methods through (GET, HEAD, OPTIONS) to an
	// allowed host (Policy.ReadOnlyMethods): Codex's limited mode.
	CapMethodRules Capability = "method-rules"
	// CapPrivateGuard: the proxy refuses every name that resolves to a local or private address,
	// an allowed one too, while an allowed address written as such passes (Policy.RefusePrivate):
	// Codex without allow_local_binding.
	CapPrivateGuard Capability = "private-guard"
	// CapDenyList: the proxy takes deny entries that win over allow entries covering them
	// (Policy.DeniedHosts). An adapter that cannot write them must not claim it: a deny entry
	// silently dropped reads as the sandbox letting the denied host through.
	CapDenyList Capability = "deny-list"
	// CapAgentConfig: the sandbox keeps its agent's own configuration in the working directory
	// read-only, so a command cannot change what the next session runs under (Claude Code's
	// .claude/settings.json and settings.local.json, Codex's .codex/config.toml).
	CapAgentConfig Capability = "agent-config"
	// CapHTTPSInterception: under reading methods only, the proxy reads HTTPS inside its tunnels
	// (its own CA towards the command) and reaches an allowed host over TLS trusting the CA its
	// host gives it (SSL_CERT_FILE), so a write over HTTPS can be judged: Codex from 0.142.0.
	CapHTTPSInterception Capability = "https-interception"
	// CapCredentials: the sandbox withholds the secrets it is told to, environment variables and
	// files, from the command (srt's credentials with mode deny, from 0.0.56).
	CapCredentials Capability = "credentials"
	// CapCredentialMasking: the command sees a stand-in for a declared environment variable,
	// which the proxy swaps for the real value only on requests to that secret's own hosts (srt's
	// credentials.envVars with mode mask and injectHosts, from 0.0.58).
	CapCredentialMasking Capability = "credential-masking"
	// CapFileMasking: the same for a declared file, whose content the command sees as a stand-in
	// (srt's credentials.files with mode mask, from 0.0.61; 0.0.58 to 0.0.60 refuse it).
	CapFileMasking Capability = "credential-file-masking"
	// CapDenyReadGlob: deny-read entries may be patterns (`dir/*.key`), as srt's settings take
	// them; a pattern the sandbox cannot apply must be refused, never dropped.
	CapDenyReadGlob Capability = "deny-read-glob"
	// CapParentProxy: the sandbox's proxy can be told to send what it allows through a parent
	// proxy (srt's network.parentProxy, from 0.0.43), judging every request itself first.
	CapParentProxy Capability = "parent-proxy"
	// CapWeakerNesting: the sandbox has a weaker mode it documents for running nested, inside
	// a container (srt's enableWeakerNestedSandbox; Claude Code's sandbox.enableWeakerNestedSandbox),
	// which the nesting class turns on.
	CapWeakerNesting Capability = "weaker-nesting"
	// CapNestedUserns: the sandbox can be told to let the command make user namespaces of its
	// own (srt's allowNestedUserNamespaces, from 0.0.80), which its docs say gives up the write
	// denies against a hostile command.
	CapNestedUserns Capability = "nested-userns"
)

// Capabilities lists every capability a sandbox can claim.
var Capabilities = []Capability{CapProxyAllowList, CapDenyAllNet, CapWritablePaths, CapDenyRead, CapProtectedFiles, CapSettingsFile, CapPortRules, CapDenyWrite, CapMethodRules, CapPrivateGuard, CapDenyList, CapAgentConfig, CapHTTPSInterception, CapCredentials, CapCredentialMasking, CapFileMasking, CapDenyReadGlob, CapParentProxy, CapWeakerNesting, CapNestedUserns}

// ParseCapability reads a capability by name. An unknown name is an error, never a capability no
// check asks for: a typo would make every check that needs it not-applicable.
func ParseCapability(s string) (Capability, error) {
	for _, c := range Capabilities {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(Capabilities))
	for i, c := range Capabilities {
		names[i] = string(c)
	}
	return "", fmt.Errorf("unknown capability %q (known: %s)", s, strings.Join(names, ", "))
}

// Seam is a way into a sandbox from outside it that a fault acts through (fixtures/faults): a
// helper tool the sandbox runs from its PATH, an executable on PATH a shim can stand in for,
// settings of its own. A fault applies to a target that offers every seam it needs.
type Seam string

// HelperTool is the seam of a tool the sandbox runs from its PATH (srt runs socat, bwrap, rg):
// hiding it, or a shim first on PATH, reaches the sandbox.
func HelperTool(name string) Seam { return Seam("helper:" + name) }

// OnPath is the seam of an executable found on the session's PATH when the sandbox runs (the
// sandbox itself, or a helper of it): a shim first on PATH stands in for it.
func OnPath(name string) Seam { return Seam("path:" + name) }

// SettingsFormat is the seam of a sandbox whose settings file, in the named format (srt's own:
// network.httpProxyPort, seccomp.applyPath, ...), a fault can patch.
func SettingsFormat(name string) Seam { return Seam("settings:" + name) }

// ProxyPorts is the seam of a sandbox whose settings name the ports of the proxy it starts
// (srt's httpProxyPort and socksProxyPort): another program can be put there.
const ProxyPorts Seam = "proxy-ports"
