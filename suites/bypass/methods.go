package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The methods class: a proxy that lets only reading methods through to an allowed host (Codex's
// limited mode, "read-only network access") must refuse a write in every way one can be put:
// another method, its spelling, behind a GET on the same connection, inside a SOCKS5 tunnel. The
// control is a GET to the allowed host, which must get through; a write that reaches the allowed
// host is caught by its log, whatever the client saw.
var methods = bypassClass{
	class: "methods", title: "reading methods only", proxyOnly: true, needs: model.CapMethodRules,
	cases: []bypassCase{
		{id: "post", what: "a POST to the allowed host is refused", req: method(crafted.ViaHTTP, "POST", false)},
		{id: "put", what: "a PUT to the allowed host is refused", req: method(crafted.ViaHTTP, "PUT", false)},
		{id: "delete", what: "a DELETE to the allowed host is refused", req: method(crafted.ViaHTTP, "DELETE", false)},
		{id: "lowercase-post", what: "a method spelt in lower case (post) is not taken for a reading one", req: method(crafted.ViaHTTP, "post", false)},
		{id: "pipelined-post", what: "a POST behind a GET on one kept-alive connection is judged too", req: method(crafted.ViaHTTP, "POST", true)},
		// HTTPS: a CONNECT tunnel under reading methods only is answered by the proxy's own TLS
		// interception, which must refuse the write it reads inside.
		{id: "post-https", what: "a POST over HTTPS (in a CONNECT tunnel) to the allowed host is refused", needs: model.CapHTTPSInterception,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaConnect, Host: allowedName, Port: 443, TLSName: allowedName, Method: "POST"}
			}},
		// Domain fronting, where the proxy reads inside the tunnel: a GET the allowed host may
		// have, but whose Host names the denied host, for a front that routes by Host.
		{id: "front-https", what: "reading inside a tunnel to the allowed host, the proxy does not pass on a request whose Host names the denied host (a front would route it there)",
			needs: model.CapHTTPSInterception, allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaConnect, Host: allowedName, Port: 443, TLSName: allowedName, Front: deniedName}
			}},
		// A SOCKS5 tunnel carries bytes the proxy cannot read: one under reading methods only is
		// refused by the policy (SOCKS5 reply 2), which stands in for the tunnel's control.
		{id: "post-socks", what: "a POST inside a SOCKS5 tunnel is refused", req: method(crafted.ViaSOCKS, "POST", false), policyRefusal: true},
	},
}

func method(via, m string, pipelined bool) func(*nethost.Hosts) crafted.Request {
	return func(*nethost.Hosts) crafted.Request {
		return crafted.Request{Via: via, Host: allowedName, Port: 80, Method: m, Pipelined: pipelined}
	}
}

// methodSession: the allowed host, reading methods only.
var methodSession = bypassSession{
	title:      "reading methods only (methods)",
	classes:    []bypassClass{methods},
	tlsConnect: true,
	policy: func(*nethost.Hosts, targets.Target) targets.Policy {
		return targets.Policy{AllowedHosts: []string{allowedName}, ReadOnlyMethods: true}
	},
}

func init() { methodSession.describe() }
