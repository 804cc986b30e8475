package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// The proxy-semantics class: what a proxy does besides matching a name. Each case gives the
// proxy two names for one request, or one connection for two requests, and the denied host's
// log decides: a request after an allowed one on a kept-alive connection (one at a time, and
// pipelined), a Host header naming the allowed host on a request for the denied one (absolute
// URI and CONNECT), and a tunnel to the allowed host whose TLS handshake names the denied one.
// Then what a proxy may hand to a path of its own: an Upgrade (a WebSocket handshake) for the
// denied host, an HTTP/1.0 request for it without a Host header, and an absolute-URI request for
// it inside a plaintext tunnel to the allowed host. Last, domain fronting: a request for the
// allowed host whose Host names the denied one, where the allowed host is a front that routes
// by Host (model.FrontPrefix). Reaching the allowed host is no breach here: it is where each
// request's target, first request or tunnel points.
var proxySemantics = bypassClass{
	class: "proxy-semantics", title: "what a proxy does besides matching", proxyOnly: true,
	cases: []bypassCase{
		{id: "keepalive", what: "a request for the denied host after an allowed one on a kept-alive connection is judged too", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, Pipelined: true, FirstHost: allowedName + ":80"}
			}},
		{id: "pipelined", what: "a request for the denied host pipelined behind an allowed one is judged too", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, Pipelined: true, Burst: true, FirstHost: allowedName + ":80"}
			}},
		{id: "host-header", what: "a request for the denied host is refused whatever its Host header says (Host: the allowed host)", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, HostHeader: allowedName + ":80"}
			}},
		{id: "connect-host-header", what: "a CONNECT to the denied host is refused whatever its Host header says", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaConnect, Host: deniedName, Port: 80, HostHeader: allowedName + ":80"}
			}},
		{id: "sni", what: "a tunnel to the allowed host goes there, whatever name its TLS handshake asks for (SNI: the denied host)", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaConnect, Host: allowedName, Port: 443, TLSName: deniedName}
			}},
		{id: "upgrade", what: "a request for the denied host that asks to switch protocols (a WebSocket handshake) is refused like any other", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, Upgrade: "websocket"}
			}},
		{id: "http10-no-host", what: "an HTTP/1.0 request for the denied host without a Host header (its target in the request line only) is refused", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, HTTP10: true}
			}},
		{id: "tunnel-absolute", what: "a plaintext tunnel to the allowed host takes an absolute-URI request for the denied host there, not to the denied host", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaConnect, Host: allowedName, Port: 80, Inner: deniedName + ":80"}
			}},
		{id: "front", what: "a request for the allowed host goes there with its own name as Host, not the client's (Host: the denied host), so a front that routes by Host cannot take it on", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: allowedName, Port: 80, Front: deniedName + ":80"}
			}},
	},
}
