// Package knownbad lists the bypass family's known-bads: the faults, and the real releases, that
// each bypass scenario must flag non-enforcing in every trial. Together they cover every bypass
// scenario (the e2e tests check both); a new case names here the known-bad that shows it.
package knownbad

import (
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/catalog"
)

// Fault is a fault on a target, under a label filter, and the scenarios it must flag.
type Fault struct {
	Target, Fault, Labels string
	Scenarios             []string
}

// cases names a class's cases as scenarios (bypass/CLASS/CASE).
func cases(class string, ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "bypass/" + class + "/" + id
	}
	return out
}

// Faults are the family's known-bads: one fault per class at least, each through the real
// sandbox's own seam.
var Faults = []Fault{
	// An allow-list proxy with every known matching bug in srt's place.
	{"srt", "bad-proxy", "bypass-matching || bypass-resolved-address || bypass-ports || bypass-policy-semantics || bypass-other-egress-proxy-no-credentials",
		append(append(append(append(
			cases("matching", "wildcard-apex", "wildcard-sibling", "exact-sibling", "exact-prefix", "nul", "crlf", "zone-id", "overlong",
				"deny-wins", "deny-case", "deny-trailing-dot", "ip-decimal", "ip-hex", "ip-octal", "ip-short", "ipv4-mapped", "ipv4-mapped-hex", "bracketed"),
			cases("resolved-address", "loopback", "loopback-socks", "metadata", "metadata-connect", "host-address")...),
			cases("ports", "other-port-http", "other-port-connect", "other-port-socks")...),
			cases("policy-semantics", "empty-list-http", "empty-list-connect", "empty-list-socks")...),
			cases("other-egress", "proxy-no-credentials")...)},
	// The same proxy serving a control API on its own port, which the command reaches through
	// the relay srt gives it; and one that dials IP literals unchecked, its host's loopback too.
	{"srt", "bad-proxy:bug=admin", "bypass-policy-tamper-admin-api", cases("policy-tamper", "admin-api")},
	{"srt", "bad-proxy:bug=ip-literals", "bypass-policy-tamper-admin-via-proxy", cases("policy-tamper", "admin-via-proxy")},
	// A proxy that judges only a connection's first request, judges the Host header but dials
	// the request target, routes a tunnel by its TLS handshake, tunnels an upgrade unchecked,
	// passes a request without a Host header, and re-routes a tunnel by the request inside.
	{"srt", "bad-proxy:bug=keepalive-unchecked+host-header-trusted+sni-only+upgrade-unchecked+hostless-unchecked+tunnel-reroute", "bypass-proxy-semantics",
		cases("proxy-semantics", "keepalive", "pipelined", "host-header", "connect-host-header", "sni", "upgrade", "http10-no-host", "tunnel-absolute")},
	// The same proxy in place of srt's, which knows nothing of srt's parent proxy: it reaches the
	// allowed host around the parent, lets the denied name's other spellings past the deny list,
	// and dials an allowed name whatever it resolves to.
	{"srt", "bad-proxy:bug=nocanon+rebind", "bypass-parent-proxy", cases("parent-proxy", "through-http", "through-connect", "through-socks",
		"denied-trailing-dot", "denied-mixed-case", "rebind-loopback", "rebind-metadata")},
	// A proxy that resolves every name before it judges it: the refused name's query leaves.
	{"srt", "bad-proxy:bug=resolve-first", "bypass-dns-proxy-name", cases("dns", "proxy-name")},
	// (policy-semantics/absent-list has none through the real srt: every release validates the
	// file before a proxy starts; 0.0.60 on refuse it loudly, earlier ones silently replace the
	// whole file by the built-in defaults, which deny everything. Its verdict is the empty
	// list's, which bad-proxy flags; bypass/trial tests both.)
	// Plain bwrap sharing the host's network: every side channel, io_uring and abstract sockets.
	{"bwrap", "netns-shared", "bypass-other-egress || bypass-unix-sockets || bypass-dns-udp || bypass-dns-tcp",
		append(append(cases("other-egress", "udp", "ipv6", "icmp", "host-loopback", "host-address", "metadata", "uring-tcp"),
			cases("unix-sockets", "host-socket", "abstract", "uring-host-socket", "uring-abstract")...), cases("dns", "udp", "tcp")...)},
	// Codex with its proxy off and the host's network shared: the side channels, host and
	// abstract unix sockets (its seccomp filter lets io_uring fail still).
	{"codex", "netns-shared", "bypass-other-egress || bypass-unix-sockets || bypass-dns-udp || bypass-dns-tcp",
		append(append(cases("other-egress", "udp", "ipv6", "icmp", "host-loopback", "host-address", "metadata"),
			cases("unix-sockets", "host-socket", "abstract")...), cases("dns", "udp", "tcp")...)},
	// Codex with its limited mode turned back to full: every write reaches the allowed host, the
	// one in a SOCKS5 tunnel too; and, its tunnels no longer read, a fronted request the denied host.
	{"codex", "methods-ignored", "bypass-methods", cases("methods", "post", "put", "delete", "lowercase-post", "pipelined-post", "post-https", "post-socks", "front-https")},
	// Codex dialling names that resolve to private addresses.
	{"codex", "private-guard-off", "bypass-private-addresses", cases("private-addresses", "loopback", "metadata", "host-address", "allowed-name")},
	// srt's seccomp helper replaced by one that filters socket(AF_UNIX) only (srt <= 0.0.44).
	{"srt", "srt-seccomp:mode=socket-only", "bypass-unix-sockets", cases("unix-sockets", "uring-host-socket")},
	{"srt", "srt-seccomp:mode=none", "bypass-unix-sockets", cases("unix-sockets", "host-socket", "uring-host-socket")},
	{"srt", "tty-shared", "bypass-tty", cases("tty", "tiocsti")},
	// srt sharing the host's network: an empty allow-list leaves the direct way open.
	{"srt", "netns-shared", "bypass-policy-semantics-empty-list-direct", cases("policy-semantics", "empty-list-direct")},
	{"srt", "fs-unmask", "bypass-fs-interplay || bypass-git || bypass-persistence || bypass-globs-existing || bypass-globs-late-in-denied-dir || bypass-userns || bypass-nesting",
		append(append(append(append(cases("fs-interplay", "deny-read-and-write", "deny-read-dir", "deny-read-dir-write", "deny-read-file", "deny-read-file-link",
			"deny-read-file-rename", "deny-read-parent-rename", "protected-bashrc-from-subdir", "protected-git-hooks-from-subdir", "protected-git-config-from-subdir"),
			cases("git", "nested-repo-config", "submodule-config", "deep-repo-config", "new-repo-config", "bare-repo-config", "worktree-pointer")...),
			cases("persistence", "profile", "bash-profile", "zshrc", "zprofile", "gitmodules", "ripgreprc", "idea", "claude-agents", "vscode", "git-xdg-config")...),
			cases("globs", "existing", "late-in-denied-dir")...),
			append(cases("userns", "unmount-protected", "unmount-deny-read", "bind-protected", "bind-deny-read", "open-tree-protected", "open-tree-deny-read"),
				cases("nesting", "userns-unmount-protected", "userns-unmount-deny-read", "userns-bind-protected", "userns-bind-deny-read",
					"userns-open-tree-protected", "userns-open-tree-deny-read")...)...)},
	// The agent's own configuration: Claude Code's settings through the same bwrap, Codex's
	// .codex/config.toml with the working directory writable as a plain path.
	{"claude-code", "fs-unmask", "bypass-persistence-claude-settings || bypass-persistence-claude-settings-local",
		cases("persistence", "claude-settings", "claude-settings-local")},
	{"codex", "project-roots-off", "bypass-persistence-codex-config", cases("persistence", "codex-config")},
	// srt with its credentials section dropped: every secret in clear; and with masked secrets
	// swapped back towards any allowed host.
	{"srt", "credentials-ignored", "bypass-secrets",
		cases("secrets", "env-deny", "file-deny", "env-mask", "file-mask")},
	{"srt", "inject-anywhere", "bypass-secrets-env-mask || bypass-secrets-file-mask", cases("secrets", "env-mask", "file-mask")},
	// A proxy that forwards the client's Host header to the allowed host, which fronts for the
	// denied one (alone: judging by the Host header, as host-header-trusted does, refuses it).
	{"srt", "bad-proxy:bug=host-forwarded", "bypass-proxy-semantics-front", cases("proxy-semantics", "front")},
	// Plain bwrap without its pid namespace, the host's /proc bound in: the command kills a
	// process of its user's outside.
	{"bwrap", "pidns-shared", "bypass-signals", cases("signals", "kill-outside")},
}

// Release is a class's known-bad that no fault stands in for: a published release of a target
// that has the bug, flagged in every trial, and the release that fixed it, passed in every
// trial, both as User.
type Release struct {
	Target, Open, Fixed, User, Labels string
	Scenarios                         []string
}

// Releases are the family's known-bads in real releases.
var Releases = []Release{
	// srt up to 0.0.65 runs a root caller's command with root's capabilities in the initial user
	// namespace: it remounts the read-only root read-write and unmounts the mounts over
	// protected and denied files. 0.0.66 drops them (--unshare-user --cap-drop ALL) but then
	// fails to start as root here until 0.0.76.
	{Target: "srt", Open: "0.0.65", Fixed: "0.0.76", User: model.UserRoot, Labels: "bypass-privilege",
		Scenarios: cases("privilege", "unmount-protected", "unmount-deny-read", "remount-rw")},
	// srt up to 0.0.44 runs its relays (socat, the bash that starts them) and bwrap in the
	// command's view without the command's seccomp filter, and the command may ptrace them;
	// 0.0.45 starts the command under its seccomp helper in namespaces of its own.
	{Target: "srt", Open: "0.0.44", Fixed: "0.0.45", User: model.UserUnprivileged, Labels: "bypass-privilege-ptrace-helper",
		Scenarios: cases("privilege", "ptrace-helper")},
	// The same in srt's weaker mode for nested use; 0.0.45 does not start in it (a known
	// finding: the seccomp helper writes the /proc the mode leaves read-only), 0.0.46 does.
	{Target: "srt", Open: "0.0.44", Fixed: "0.0.46", User: model.UserUnprivileged, Labels: "bypass-nesting-ptrace-helper",
		Scenarios: cases("nesting", "ptrace-helper")},
	// As root, the command can still open the memory of an unfiltered process up to 0.0.79 (the
	// seccomp helper with its capabilities in view); 0.0.80 hides every one of them.
	{Target: "srt", Open: "0.0.79", Fixed: "0.0.80", User: model.UserRoot, Labels: "bypass-privilege-ptrace-helper",
		Scenarios: cases("privilege", "ptrace-helper")},
	// srt up to 0.0.34 takes a read-denied pattern on Linux and applies nothing of it (its README
	// then: "Linux currently does not support glob matching"); 0.0.37, the next release, masks
	// the files it matches when the command starts.
	{Target: "srt", Open: "0.0.34", Fixed: "0.0.37", User: model.UserUnprivileged, Labels: "bypass-globs-existing",
		Scenarios: cases("globs", "existing")},
	// srt up to 0.0.64 masks a protected path that is not there by mounting on it as it finds it,
	// a link the last session planted there too; bubblewrap before 0.12.0 then makes the link's
	// target while it sets up, through /oldroot: on the host, outside what the command may
	// write. 0.0.65 resolves the link first.
	{Target: "srt", Open: "0.0.64", Fixed: "0.0.65", User: model.UserUnprivileged, Labels: "bypass-setup",
		Scenarios: cases("setup", "planted-file", "planted-dir", "planted-nested")},
}

// Open are the family's known-bads that no fault stands in for and no release has fixed yet: the
// pinned release itself fails the case in every trial, a known finding of its own.
var Open = []Release{
	// srt (and Claude Code's bundled runtime) relays the command's proxy port to its proxy
	// through unix sockets in the caller's TMPDIR; where the settings make that writable, the
	// command puts links to a host socket in their place and the relay follows them.
	{Target: "srt", Open: "0.0.83", User: model.UserUnprivileged, Labels: "bypass-bridge",
		Scenarios: cases("bridge", "socket-swap")},
	// Run from a project's node_modules, srt (like Claude Code and Codex) lets the command replace
	// its own program there, which the user's next start runs unsandboxed.
	{Target: "srt", Open: "0.0.83", User: model.UserUnprivileged, Labels: "bypass-persistence-own-binary",
		Scenarios: cases("persistence", "own-binary")},
}

// Flags are the known-bads as the catalogue keeps them: each flags its scenarios non-enforcing,
// in every trial.
func Flags() []catalog.Flags {
	var out []catalog.Flags
	for _, kb := range Faults {
		out = append(out, catalog.Flags{KnownBad: catalog.KnownBad{Fault: kb.Fault, Target: kb.Target, Expect: model.NonEnforcing},
			Scenarios: kb.Scenarios})
	}
	for _, kb := range append(append([]Release{}, Releases...), Open...) {
		out = append(out, catalog.Flags{KnownBad: catalog.KnownBad{Target: kb.Target, Release: kb.Open, Fixed: kb.Fixed, User: kb.User, Expect: model.NonEnforcing},
			Scenarios: kb.Scenarios})
	}
	return out
}
