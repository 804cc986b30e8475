package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The parent-proxy class: the sandbox's proxy is told to send what it allows through a parent
// proxy (srt's network.parentProxy; Claude Code's and Codex's take the caller's proxy variables),
// as on a machine whose only way out is a company's proxy, or with a local forwarding one. The
// trial's parent is an open proxy on the host's loopback that logs what it is asked for
// (model.RoleParent, bypasstrial.Plan.Parent). What the sandbox allows must go through it, over
// each proxy channel, never around it; what it refuses must stay refused, spelled the way that
// matching has to canonicalise (a trailing dot, another case), so the parent never gets to
// forward it; and an allowed name that resolves to the host's loopback or to the metadata
// address must be refused as without a parent, although the parent is the one that resolves it.
var parentProxy = bypassClass{
	class: "parent-proxy", title: "a parent proxy", proxyOnly: true, needs: model.CapParentProxy,
	cases: []bypassCase{
		{id: "through-http", what: "the allowed host, asked for over HTTP, is reached through the parent proxy, never around it", allowedOK: true, throughParent: true,
			req: raw(crafted.ViaHTTP, allowedName)},
		{id: "through-connect", what: "the allowed host, asked for with a CONNECT, is reached through the parent proxy, never around it", allowedOK: true, throughParent: true,
			req: raw(crafted.ViaConnect, allowedName)},
		{id: "through-socks", what: "the allowed host, asked for over SOCKS5, is reached through the parent proxy, never around it", allowedOK: true, throughParent: true,
			req: raw(crafted.ViaSOCKS, allowedName)},
		// The deny list is what refuses them under the allowed wildcard: n/a without one.
		{id: "denied-trailing-dot", what: "the denied host, its name ending in a dot, is refused before the parent proxy (CONNECT)", needs: model.CapDenyList,
			req: raw(crafted.ViaConnect, deniedName+".")},
		{id: "denied-mixed-case", what: "the denied host, its name in capitals, is refused before the parent proxy (HTTP)", needs: model.CapDenyList,
			req: raw(crafted.ViaHTTP, "DENIED.SANDCHECK.TEST")},
		{id: "rebind-loopback", what: "an allowed name resolving to the host's loopback is refused, although the parent proxy resolves it (CONNECT)",
			req: raw(crafted.ViaConnect, "loopback."+rebindBase)},
		{id: "rebind-metadata", what: "an allowed name resolving to the metadata address is refused, although the parent proxy resolves it (HTTP)",
			req: raw(crafted.ViaHTTP, "metadata."+rebindBase)},
	},
}

// parentSession: every fixture name allowed but the denied host's, which the deny list names
// (so that only matching can tell its other spellings from an allowed name), everything through
// the fixture's parent proxy.
var parentSession = bypassSession{
	title:   "a parent proxy (parent-proxy)",
	classes: []bypassClass{parentProxy},
	names: []nethost.Name{
		named("loopback."+rebindBase, model.RoleLoopback),
		named("metadata."+rebindBase, model.RoleMetadata),
	},
	parent: true,
	policy: func(*nethost.Hosts, targets.Target) targets.Policy {
		return targets.Policy{AllowedHosts: []string{"*." + nethost.Domain}, DeniedHosts: []string{deniedName}}
	},
}

func init() { parentSession.describe() }
