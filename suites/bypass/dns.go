package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// The dns class: DNS as a way out. A query carries data in its name (the case and the trial in
// its first labels, under the denied host's name) to whichever resolver answers for that zone,
// so a query reaching the fixture's resolver is egress, whatever came back. Two ways: the
// command's own query, over UDP and over TCP, to the resolver the sandbox's host uses (made
// without the sandbox first, to prove it gets there); and a name the policy refuses handed to
// the proxy, which must refuse it without resolving it on the host.
//
// DNS over HTTPS to an allowed host is not a case: the allowed host is then the channel, as any
// allowed host is, and no sandbox promises otherwise.

// dnsQuery is a TXT query of the case's own name under the denied host's, to the fixture resolver.
func dnsQuery(via string) func(*nethost.Hosts) crafted.Request {
	return func(f *nethost.Hosts) crafted.Request {
		return crafted.Request{Via: via, Host: f.Denied.Name, Addr: f.Resolver.String()}
	}
}

var dnsDirect = bypassClass{
	class: "dns", title: "DNS as a way out",
	cases: []bypassCase{
		{id: "udp", what: "a query carrying data under the denied host's name reaches no resolver (UDP)", req: dnsQuery(crafted.ViaDNSUDP)},
		{id: "tcp", what: "a query carrying data under the denied host's name reaches no resolver (TCP)", req: dnsQuery(crafted.ViaDNSTCP)},
	},
}

// dnsProxy runs in the allow-list session, beside the classes whose names the proxy must refuse.
var dnsProxy = bypassClass{
	class: "dns", title: "DNS as a way out", proxyOnly: true,
	cases: []bypassCase{
		{id: "proxy-name", what: "a name the policy refuses is not resolved by the proxy (its query would carry the name out)",
			req: raw(crafted.ViaConnect, "exfil-data."+deniedName)},
	},
}
