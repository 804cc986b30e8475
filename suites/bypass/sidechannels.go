package bypass

import (
	"net/netip"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The side channels a proxy never sees, which every target must close, deny-all ones
// included: other protocols and address families, the host's loopback and metadata addresses,
// the proxy port without its credentials, host unix sockets (also through io_uring, which a
// seccomp rule on socket(2) does not see), and the caller's terminal. Each request that uses no
// proxy is first made without the sandbox, as the same user from the same host namespace: what
// the fixture logs then proves the request can get there, so a refusal inside is the sandbox's.

// defaultPolicy is the network scenario's: the allowed host only.
func defaultPolicy(*nethost.Hosts, targets.Target) targets.Policy {
	return targets.Policy{AllowedHosts: []string{allowedName}}
}

// to builds a request that uses no proxy, to an address of the running fixture.
func to(via string, addr func(f *nethost.Hosts) string) func(*nethost.Hosts) crafted.Request {
	return func(f *nethost.Hosts) crafted.Request { return crafted.Request{Via: via, Addr: addr(f)} }
}

func port80(a netip.Addr) string { return netip.AddrPortFrom(a, 80).String() }

var otherEgress = bypassClass{
	class: "other-egress", title: "ways out the proxy never sees",
	cases: []bypassCase{
		{id: "udp", what: "UDP (not DNS) to the denied host does not leave", req: to(crafted.ViaUDP, func(f *nethost.Hosts) string {
			return netip.AddrPortFrom(f.Denied.IP, nethost.UDPPort).String()
		})},
		{id: "ipv6", what: "IPv6 to the denied host does not leave", req: to(crafted.ViaDirect, func(f *nethost.Hosts) string { return port80(f.Extra.DeniedV6) })},
		{id: "icmp", what: "an ICMP echo to the denied host does not leave", req: to(crafted.ViaICMP, func(f *nethost.Hosts) string { return f.Denied.IP.String() })},
		{id: "host-loopback", what: "the host's loopback is out of reach", req: to(crafted.ViaDirect, func(f *nethost.Hosts) string { return port80(f.Extra.Loopback.IP) })},
		{id: "host-address", what: "the host's own address is out of reach", req: to(crafted.ViaDirect, func(f *nethost.Hosts) string { return port80(f.HostEnd) })},
		{id: "metadata", what: "the metadata address 169.254.169.254 is out of reach", req: to(crafted.ViaDirect, func(*nethost.Hosts) string { return port80(nethost.MetadataAddr) })},
		{id: "uring-tcp", what: "TCP through io_uring to the denied host does not leave", req: to(crafted.ViaUringTCP, func(f *nethost.Hosts) string { return port80(f.Denied.IP) })},
		{id: "proxy-no-credentials", what: "the proxy port serves nobody without the session's credentials",
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: allowedName, Port: 80, NoAuth: true}
			}},
	},
}

var unixSockets = bypassClass{
	class: "unix-sockets", title: "host unix sockets",
	cases: []bypassCase{
		{id: "host-socket", what: "a host unix socket in the sandbox's view cannot be connected to", req: to(crafted.ViaUnix, func(f *nethost.Hosts) string { return f.Extra.UnixPath })},
		{id: "abstract", what: "an abstract unix socket of the host cannot be connected to", req: to(crafted.ViaUnix, func(f *nethost.Hosts) string { return "@" + f.Extra.Abstract })},
		{id: "uring-host-socket", what: "a host unix socket cannot be connected to through io_uring", req: to(crafted.ViaUringUnix, func(f *nethost.Hosts) string { return f.Extra.UnixPath })},
		{id: "uring-abstract", what: "an abstract unix socket cannot be connected to through io_uring", req: to(crafted.ViaUringUnix, func(f *nethost.Hosts) string { return "@" + f.Extra.Abstract })},
	},
}

var tty = bypassClass{
	class: "tty", title: "the caller's terminal",
	cases: []bypassCase{
		{id: "tiocsti", what: "the command cannot push input into the caller's terminal (TIOCSTI)", req: func(*nethost.Hosts) crafted.Request { return crafted.Request{Via: crafted.ViaTIOCSTI} }},
	},
}

// signals: a command that shares its user's view of processes can signal any of them (`kill -9
// -1` ends them all: the editor, the agent itself); a sentinel outside stands in for them.
var signals = bypassClass{
	class: "signals", title: "the user's other processes",
	cases: []bypassCase{
		{id: "kill-outside", what: "a process of the user's outside the sandbox cannot be killed from inside (kill -9 -1 would)", req: func(*nethost.Hosts) crafted.Request { return crafted.Request{Via: crafted.ViaSignal} }},
	},
}

// sideChannels holds the proxy-semantics class too: it needs the same policy (the allowed host
// on any port, for its TLS tunnel), and none of its cases can change what another sees.
var sideChannels = bypassSession{
	title:   "side channels and proxy semantics (other-egress, unix-sockets, tty, signals, dns, proxy-semantics)",
	classes: []bypassClass{otherEgress, unixSockets, tty, signals, dnsDirect, proxySemantics},
	policy:  defaultPolicy,
	tty:     true,
}

func init() { sideChannels.describe() }
