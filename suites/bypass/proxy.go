package bypass

import (
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The proxy classes: host-name matching and canonicalisation, the address an allowed name
// resolves to, ports, and what an empty or absent allow-list means. Every name a case sends that
// the policy must refuse resolves, on the sandbox's host, to a fixture that logs it: the denied
// host, or the loopback, metadata and own-address listeners. So a proxy fooled into dialling it
// is caught by the fixture's log, whatever the client inside saw.

// Fixture names of the bypass classes, under the fixture domain.
const (
	wildBase    = "wild." + nethost.Domain   // policy entry *.wild.sandcheck.test
	rebindBase  = "rebind." + nethost.Domain // policy entry *.rebind.sandcheck.test
	deniedName  = model.RoleDenied + "." + nethost.Domain
	allowedName = model.RoleAllowed + "." + nethost.Domain
)

func named(name, role string) nethost.Name { return nethost.Name{Name: name, Role: role} }

// raw builds a request to a fixed host (the fixture needed only for addresses elsewhere).
func raw(via, host string) func(*nethost.Hosts) crafted.Request {
	return func(*nethost.Hosts) crafted.Request { return crafted.Request{Via: via, Host: host, Port: 80} }
}

// deniedIP builds a request to a spelling of the denied host's address.
func deniedIP(via string, spell func(a [4]byte) string) func(*nethost.Hosts) crafted.Request {
	return func(f *nethost.Hosts) crafted.Request {
		return crafted.Request{Via: via, Host: spell(f.Denied.IP.As4()), Port: 80}
	}
}

// overlong is a 275-byte name under the allowed wildcard whose first 255 bytes are a name under
// the denied host's: a proxy that checks the whole name and dials a 255-byte buffer is fooled.
func overlong() string {
	head := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 41) + "." + deniedName
	return head + "." + wildBase
}

var matchingAllow = bypassClass{
	class: "matching", title: "host-name matching", proxyOnly: true,
	cases: []bypassCase{
		{id: "wildcard-apex", what: "a wildcard entry does not admit its apex (wild.sandcheck.test for *.wild.sandcheck.test)", req: raw(crafted.ViaSOCKS, wildBase)},
		{id: "wildcard-sibling", what: "a wildcard entry matches on a dot boundary (xwild.sandcheck.test)", req: raw(crafted.ViaSOCKS, "x"+wildBase)},
		{id: "exact-sibling", what: "an exact entry is not a suffix match (xallowed.sandcheck.test)", req: raw(crafted.ViaHTTP, "x"+allowedName)},
		{id: "exact-prefix", what: "an exact entry is not a prefix match (allowed.sandcheck.test.denied.sandcheck.test)", req: raw(crafted.ViaConnect, allowedName+"."+deniedName)},
		{id: "nul", what: "a name carrying a NUL is not cut after the check (denied...\\0.wild...)", req: raw(crafted.ViaSOCKS, deniedName+"\x00."+wildBase)},
		{id: "crlf", what: "a name carrying CR/LF is not cut after the check", req: raw(crafted.ViaSOCKS, deniedName+"\r\n."+wildBase)},
		{id: "zone-id", what: "an IPv6 zone id does not carry a wildcard suffix (::ffff:DENIED%x.wild...)",
			req: func(f *nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaSOCKS, Host: "::ffff:" + f.Denied.IP.String() + "%x." + wildBase, Port: 80}
			}},
		{id: "overlong", what: "a name over 255 bytes is not cut to a denied one after the check", req: raw(crafted.ViaConnect, overlong())},
	},
}

var matchingDeny = bypassClass{
	class: "matching", title: "deny-list entries", proxyOnly: true, needs: model.CapDenyList,
	cases: []bypassCase{
		{id: "deny-wins", what: "a deny entry wins over an allow entry that covers it", req: raw(crafted.ViaHTTP, deniedName)},
		{id: "deny-case", what: "a deny entry matches whatever the case (DENIED.sandcheck.test)", req: raw(crafted.ViaHTTP, "DENIED."+nethost.Domain)},
		{id: "deny-trailing-dot", what: "a deny entry matches the name with a trailing dot", req: raw(crafted.ViaSOCKS, deniedName+".")},
		{id: "ip-decimal", what: "a denied address is denied spelled as one decimal number", req: deniedIP(crafted.ViaHTTP, func(a [4]byte) string {
			return itoa(uint64(a[0])<<24 | uint64(a[1])<<16 | uint64(a[2])<<8 | uint64(a[3]))
		})},
		{id: "ip-hex", what: "a denied address is denied spelled in hex", req: deniedIP(crafted.ViaHTTP, func(a [4]byte) string {
			return "0x" + hex2(a[0]) + hex2(a[1]) + hex2(a[2]) + hex2(a[3])
		})},
		{id: "ip-octal", what: "a denied address is denied spelled in octal", req: deniedIP(crafted.ViaSOCKS, func(a [4]byte) string {
			return "0" + oct(a[0]) + ".0" + oct(a[1]) + ".0" + oct(a[2]) + ".0" + oct(a[3])
		})},
		{id: "ip-short", what: "a denied address is denied in its short form (198.18.3)", req: deniedIP(crafted.ViaHTTP, func(a [4]byte) string {
			return itoa(uint64(a[0])) + "." + itoa(uint64(a[1])) + "." + itoa(uint64(a[2])<<8|uint64(a[3]))
		})},
		{id: "ipv4-mapped", what: "a denied address is denied as IPv4-mapped IPv6 ([::ffff:a.b.c.d])", req: deniedIP(crafted.ViaConnect, func(a [4]byte) string {
			return "[::ffff:" + dotted(a) + "]"
		})},
		{id: "ipv4-mapped-hex", what: "a denied address is denied as IPv4-mapped IPv6 written in hex ([::ffff:c612:203])", req: deniedIP(crafted.ViaConnect, func(a [4]byte) string {
			return "[::ffff:" + hex2(a[0]) + hex2(a[1]) + ":" + hex2(a[2]) + hex2(a[3]) + "]"
		})},
		{id: "bracketed", what: "a denied address is denied in brackets ([a.b.c.d])", req: deniedIP(crafted.ViaConnect, func(a [4]byte) string {
			return "[" + dotted(a) + "]"
		})},
	},
}

var resolvedAddress = bypassClass{
	class: "resolved-address", title: "an allowed name resolving to a forbidden address", proxyOnly: true,
	cases: []bypassCase{
		{id: "loopback", what: "an allowed name resolving to loopback is not dialled", req: raw(crafted.ViaHTTP, "loopback."+rebindBase)},
		{id: "loopback-socks", what: "an allowed name resolving to loopback is not dialled (SOCKS5)", req: raw(crafted.ViaSOCKS, "loopback."+rebindBase)},
		{id: "metadata", what: "an allowed name resolving to the metadata address 169.254.169.254 is not dialled", req: raw(crafted.ViaHTTP, "metadata."+rebindBase)},
		{id: "metadata-connect", what: "an allowed name resolving to the metadata address is not dialled (CONNECT)", req: raw(crafted.ViaConnect, "metadata."+rebindBase)},
		{id: "host-address", what: "an allowed name resolving to the host's own address is not dialled", req: raw(crafted.ViaSOCKS, "self."+rebindBase)},
	},
}

var ports = bypassClass{
	class: "ports", title: "host:port entries", proxyOnly: true, needs: model.CapPortRules,
	cases: []bypassCase{
		{id: "other-port-http", what: "another port of a host allowed on port 80 stays closed", req: raw8080(crafted.ViaHTTP)},
		{id: "other-port-connect", what: "another port of a host allowed on port 80 stays closed (CONNECT)", req: raw8080(crafted.ViaConnect)},
		{id: "other-port-socks", what: "another port of a host allowed on port 80 stays closed (SOCKS5)", req: raw8080(crafted.ViaSOCKS)},
	},
}

func raw8080(via string) func(*nethost.Hosts) crafted.Request {
	return func(*nethost.Hosts) crafted.Request {
		return crafted.Request{Via: via, Host: allowedName, Port: nethost.AltPort}
	}
}

// policyEmpty: an empty allow-list is deny-all (srt's documented meaning); the allowed host must
// be refused by the proxy's policy, which also proves the proxy alive.
var policyEmpty = bypassClass{
	class: "policy-semantics", title: "what an empty or absent allow-list means", proxyOnly: true,
	cases: []bypassCase{
		{id: "empty-list-http", what: "an empty allow-list denies everything (HTTP)", req: raw(crafted.ViaHTTP, allowedName), policyRefusal: true},
		{id: "empty-list-connect", what: "an empty allow-list denies everything (CONNECT)", req: raw(crafted.ViaConnect, allowedName), policyRefusal: true},
		{id: "empty-list-socks", what: "an empty allow-list denies everything (SOCKS5)", req: raw(crafted.ViaSOCKS, allowedName), policyRefusal: true},
		{id: "empty-list-direct", what: "an empty allow-list leaves no way out around the proxy", req: func(f *nethost.Hosts) crafted.Request {
			return crafted.Request{Via: crafted.ViaDirect, Addr: port80(f.Allowed.IP)}
		}},
	},
}

// policyAbsent: no allowedDomains key at all. srt documents the list as required and all network
// denied by default: refusing to start, loudly, or denying everything both pass.
var policyAbsent = bypassClass{
	class: "policy-semantics", title: "what an empty or absent allow-list means", proxyOnly: true,
	cases: []bypassCase{
		{id: "absent-list", what: "an absent allow-list denies everything, or the sandbox refuses to start", req: raw(crafted.ViaHTTP, allowedName), policyRefusal: true, passIfRefusedToStart: true},
	},
}

// The proxy sessions. The allow-list one holds the classes whose policies can be one: the
// allowed host on port 80 (on any port where the target cannot say ports), and the two
// wildcards the matching and rebinding names fall under.
var proxySessions = []bypassSession{
	{
		title:   "allow-list entries (matching, resolved-address, ports, dns)",
		classes: []bypassClass{matchingAllow, resolvedAddress, ports, dnsProxy},
		names: []nethost.Name{
			named("sub."+wildBase, model.RoleAllowed),
			named(wildBase, model.RoleDenied),
			named("x"+wildBase, model.RoleDenied),
			named("x"+allowedName, model.RoleDenied),
			named("loopback."+rebindBase, model.RoleLoopback),
			named("metadata."+rebindBase, model.RoleMetadata),
			named("self."+rebindBase, model.RoleSelf),
		},
		policy: func(_ *nethost.Hosts, t targets.Target) targets.Policy {
			allowed := allowedName + ":80"
			if !targets.Has(t, model.CapPortRules) {
				allowed = allowedName
			}
			return targets.Policy{AllowedHosts: []string{allowed, "*." + wildBase, "*." + rebindBase}}
		},
	},
	{
		title:   "deny-list entries (matching)",
		classes: []bypassClass{matchingDeny},
		policy: func(f *nethost.Hosts, _ targets.Target) targets.Policy {
			return targets.Policy{AllowedHosts: []string{"*." + nethost.Domain}, DeniedHosts: []string{deniedName, f.Denied.IP.String()}}
		},
	},
	{
		title:      "allowedDomains: [] (policy-semantics)",
		classes:    []bypassClass{policyEmpty},
		noControls: true,
		policy:     func(*nethost.Hosts, targets.Target) targets.Policy { return targets.Policy{AllowedHosts: []string{}} },
	},
	{
		title:      "allowedDomains absent (policy-semantics)",
		classes:    []bypassClass{policyAbsent},
		noControls: true,
		policy:     func(*nethost.Hosts, targets.Target) targets.Policy { return targets.Policy{} },
		session: func(s *targets.Session) {
			s.Patches = append(s.Patches, func(m map[string]any) {
				if n, ok := m["network"].(map[string]any); ok {
					delete(n, "allowedDomains")
				}
			})
		},
	},
}

func init() {
	for _, s := range proxySessions {
		s.describe()
	}
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func hex2(b byte) string {
	const d = "0123456789abcdef"
	return string([]byte{d[b>>4], d[b&15]})
}

func oct(b byte) string {
	if b == 0 {
		return "0"
	}
	var s []byte
	for ; b > 0; b /= 8 {
		s = append([]byte{byte('0' + b%8)}, s...)
	}
	return string(s)
}

func dotted(a [4]byte) string {
	return itoa(uint64(a[0])) + "." + itoa(uint64(a[1])) + "." + itoa(uint64(a[2])) + "." + itoa(uint64(a[3]))
}
