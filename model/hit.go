package model

import (
	"fmt"
	"strings"
	"time"
)

// A Hit is the evidence the fixture servers keep: every arrival on a test host, logged outside
// the sandbox. It is vocabulary rather than fixture code because three layers read it: the
// fixtures log it, the classifiers judge it, and the runner reads it streamed from a trial that
// may have been killed (see wire/frame).

// Roles of the fixture hosts, and of the hits they log. A hit's Role is RoleAllowed only when it
// reached the allowed host (or asked the resolver for one of its names); every other role is
// traffic the policy does not allow (but RoleParent's), so a runner that sees one streamed counts
// it as egress.
const (
	RoleAllowed = "allowed" // the allowed host, or a DNS query for one of its names
	RoleDenied  = "denied"  // the denied host, or a DNS query for one of its names
	// RoleDNS is the resolver itself: a query for a name that belongs to no fixture host, or a
	// datagram that is not DNS. The resolver is outside the sandbox and no policy allows it.
	RoleDNS = "dns"
	// The bypass fixtures' roles (extras.go), each a place no policy lets a sandbox reach: a
	// listener on the host's loopback, the cloud metadata address, the host's own address, a
	// unix socket of the host.
	RoleLoopback = "loopback"
	RoleMetadata = "metadata"
	RoleSelf     = "self"
	RoleUnix     = "unix"
	// RoleParent is the parent proxy a sandbox is told to send its traffic through (srt's
	// network.parentProxy): an open forward proxy on the host's loopback that logs what it is
	// asked and forwards it. Reaching it is no egress of itself; what it forwards is judged where
	// it arrives, and its log shows which requests went through it.
	RoleParent = "parent"
	// RoleSentinel is a process of the sandbox's user outside the sandbox (fixtures/sentinel),
	// logged when something kills it: no traffic, but no policy lets a command reach it either.
	RoleSentinel = "sentinel"
)

// Protocols of hits. One client request can leave several hits: a "tcp" one when the connection
// is accepted, a "tls" one at the ClientHello, then the "http"/"https" request itself. The three
// share From (the client's address and port), which is how they are matched to each other.
const (
	ProtoTCP    = "tcp"    // a TCP connection accepted (logged even if no request follows)
	ProtoTLS    = "tls"    // a TLS ClientHello; Path is the SNI name
	ProtoHTTP   = "http"   // a plain HTTP request; Path is the request path
	ProtoHTTPS  = "https"  // an HTTP request inside TLS; Path is the request path
	ProtoDNS    = "dns"    // a DNS query; Path is the name asked
	ProtoUDP    = "udp"    // a datagram that is not a DNS query (to the resolver, or the UDP echo)
	ProtoICMP   = "icmp"   // an ICMP echo request; Path is its payload
	ProtoUnix   = "unix"   // a unix socket connection; Path is the first line sent, if any
	ProtoSignal = "signal" // the sentinel's death; Path is its marker, Detail how it ended
)

// FrontPrefix starts the paths under which the allowed host acts as a front, as a CDN's edge
// does: it passes a request to the backend its Host header names, the denied host's included,
// and that backend logs it. Elsewhere it serves itself whatever the Host says, so a case that
// merely lands a request on the allowed host is judged as the allowed host's.
const FrontPrefix = "/front/"

// Hit is one thing a fixture server received: the recording upstream that proves where traffic
// went, whatever the probe inside claims.
type Hit struct {
	Role   string `json:"role"`
	Proto  string `json:"proto"`            // one of the Proto constants
	Path   string `json:"path"`             // request path, SNI name, or the DNS name asked
	Host   string `json:"host,omitempty"`   // the fixture host's name (for DNS: whose name was asked)
	Port   int    `json:"port,omitempty"`   // the server port (80, 443, 53)
	From   string `json:"from"`             // the client's address:port
	Detail string `json:"detail,omitempty"` // method, query type, answer...
	// Carried names the canaries (secrets planted in the sandbox's environment and files) whose
	// real values the request carried, in its path, headers or body: sorted, joined by ", " (a
	// string, so that a Hit stays comparable).
	Carried string    `json:"carried,omitempty"`
	At      time.Time `json:"at"`
}

// Egress reports whether the hit is traffic the policy does not allow, whatever the target: it
// reached something other than the allowed host (or the parent proxy the sandbox was given).
func (h Hit) Egress() bool { return h.Role != RoleAllowed && h.Role != RoleParent }

// String is one line naming role, protocol, host and path, e.g.
// "denied http GET /http/ab12 on denied.sandcheck.test:80 from 198.18.0.1:4242".
func (h Hit) String() string {
	var b strings.Builder
	b.WriteString(h.Role + " " + h.Proto)
	if h.Detail != "" {
		b.WriteString(" " + h.Detail)
	}
	if h.Path != "" {
		b.WriteString(" " + h.Path)
	}
	if h.Host != "" || h.Port != 0 {
		on := h.Host
		if h.Port != 0 {
			on += fmt.Sprintf(":%d", h.Port)
		}
		b.WriteString(" on " + on)
	}
	if h.From != "" {
		b.WriteString(" from " + h.From)
	}
	if h.Carried != "" {
		b.WriteString(" carrying " + h.Carried)
	}
	return b.String()
}
