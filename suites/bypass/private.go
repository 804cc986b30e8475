package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The private-addresses class: a proxy that promises to refuse every name resolving to a local
// or private address (Codex without allow_local_binding: "hostnames that resolve to local/private
// IPs are blocked even if allowlisted") must refuse the allowed names that resolve to loopback,
// to the metadata address, to the host's own address, and to the allowed host itself, whose
// fixture address (198.18.0.0/15) is private. The controls reach the allowed host by its
// address, which the policy lists as such: the one way through such a guard.
var privateAddresses = bypassClass{
	class: "private-addresses", title: "names resolving to private addresses", proxyOnly: true, needs: model.CapPrivateGuard,
	cases: []bypassCase{
		{id: "loopback", what: "an allowed name resolving to loopback is refused", req: raw(crafted.ViaHTTP, "loopback."+rebindBase)},
		{id: "metadata", what: "an allowed name resolving to the metadata address is refused (CONNECT)", req: raw(crafted.ViaConnect, "metadata."+rebindBase)},
		{id: "host-address", what: "an allowed name resolving to the host's own address is refused (SOCKS5)", req: raw(crafted.ViaSOCKS, "self."+rebindBase)},
		{id: "allowed-name", what: "the allowed host's own name, resolving to a private address, is refused", req: raw(crafted.ViaHTTP, allowedName)},
	},
}

// privateSession: the allowed host by address and by name, the rebinding names, the guard on.
var privateSession = bypassSession{
	title:      "names resolving to private addresses (private-addresses)",
	classes:    []bypassClass{privateAddresses},
	ipControls: true,
	names: []nethost.Name{
		named("loopback."+rebindBase, model.RoleLoopback),
		named("metadata."+rebindBase, model.RoleMetadata),
		named("self."+rebindBase, model.RoleSelf),
	},
	policy: func(f *nethost.Hosts, _ targets.Target) targets.Policy {
		return targets.Policy{AllowedHosts: []string{f.Allowed.IP.String(), allowedName, "*." + rebindBase}, RefusePrivate: true}
	},
}

func init() { privateSession.describe() }
