package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// The policy-tamper class: the proxy's control plane out of the command's reach. An allow-list
// proxy that takes its policy from a request (an admin API, tamper.AdminPort) must not be
// reachable from inside, neither directly nor through the proxy itself. Either way the fixture decides: the denied host's log after the
// command tried every control request it could send, and the host's loopback at the admin port.
var policyTamper = bypassClass{
	class: "policy-tamper", title: "the proxy's control plane", proxyOnly: true,
	cases: []bypassCase{
		{id: "admin-api", what: "control requests to every loopback listener and proxy port inside do not open the denied host",
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: deniedName, Port: 80, Tamper: crafted.TamperAdmin}
			}},
		{id: "admin-via-proxy", what: "the proxy does not carry a request to the host's own loopback admin port (127.0.0.1:8080)",
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: "127.0.0.1", Port: nethost.ControlPort, Method: "POST"}
			}},
	},
}

// tamperSession: the allowed host only, in a session of its own: a control request that works
// changes the policy every other case of its session would be judged under.
var tamperSession = bypassSession{
	title:   "the proxy's control plane (policy-tamper)",
	classes: []bypassClass{policyTamper},
	policy:  defaultPolicy,
}

func init() { tamperSession.describe() }
