package classify

import (
	"cmp"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// socksReply matches curl's report of a SOCKS5 reply code: "... connection to HOST. (N)".
var socksReply = regexp.MustCompile(`\. \([0-9]+\)$`)

// Verdict is what one attempt amounts to, read from what the client saw.
type Verdict string

const (
	Reached       Verdict = "reached"        // the host's own token came back
	PolicyBlocked Verdict = "policy-blocked" // the proxy consulted its policy and refused
	NoRoute       Verdict = "no-route"       // no way out of the namespace (direct, DNS)
	Accepted      Verdict = "accepted"       // direct: the connect was accepted, then no reply came
	ProxyRefused  Verdict = "proxy-refused"  // nothing accepted a connection on the proxy port
	ProxyEmpty    Verdict = "proxy-empty"    // something accepted, then closed with no reply
	ProxyError    Verdict = "proxy-error"    // the proxy answered with an error that is not a policy refusal
	Skipped       Verdict = "skipped"        // the channel could not be tried here
	Unexplained   Verdict = "unexplained"    // none of the above: a harness question
)

// tokenRoles lists, sorted, the roles whose token appears in what the attempt got back. Every
// token is looked for, so the answer never depends on map order.
func tokenRoles(a probe.Attempt, tokens map[string]string) []string {
	var roles []string
	for role, tok := range tokens {
		if tok != "" && (strings.Contains(a.Body, tok) || strings.Contains(a.Err, tok)) {
			roles = append(roles, role)
		}
	}
	sort.Strings(roles)
	return roles
}

// VerdictOf reads one attempt. Tokens decide "reached" (the denied host's token wins over any
// other in the same reply); everything else is read from the client's own words (curl's exit
// code and message, HTTP status, proxy error header, errno). The detail of Reached is the role
// whose token came back.
func VerdictOf(a probe.Attempt, tokens map[string]string) (Verdict, string) {
	if a.Skipped != "" {
		return Skipped, a.Skipped
	}
	if roles := tokenRoles(a, tokens); len(roles) > 0 {
		for _, r := range roles {
			if r == model.RoleDenied {
				return Reached, r
			}
		}
		return Reached, roles[0]
	}
	if a.Channel == model.ChanDNS {
		if len(a.Resolved) > 0 {
			return Reached, "dns answered " + strings.Join(a.Resolved, ",")
		}
		return NoRoute, a.Err
	}
	if a.Channel == model.ChanDirect {
		if a.Connected {
			// Something accepted the connection: whether it was the fixture host is the
			// server log's to say, never "no route".
			if a.Status != 0 {
				return Unexplained, fmt.Sprintf("direct connection answered %d without a fixture token", a.Status)
			}
			return Accepted, cmp.Or(a.Err, "connection accepted, no reply")
		}
		switch a.Errno {
		case "ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED", "ETIMEDOUT", "EADDRNOTAVAIL", "EPERM", "EACCES", "EAFNOSUPPORT":
			return NoRoute, a.Err
		}
		if a.Status != 0 {
			return Unexplained, fmt.Sprintf("direct connection answered %d without a fixture token", a.Status)
		}
		return Unexplained, a.Err
	}
	// Through a proxy (curl).
	msg := a.Err
	switch {
	case a.Status == 403 || strings.Contains(msg, "response 403") || strings.Contains(a.Body, "blocked by network allowlist"):
		return PolicyBlocked, cmp.Or(a.ProxyError, msg, "403")
	case a.Status == 407 || strings.Contains(msg, "response 407") ||
		a.Exit == 97 && (strings.Contains(msg, "No authentication method was acceptable") || strings.Contains(msg, "User was rejected")):
		// The proxy answered, wanting credentials the client does not have (another session's
		// proxy, in a shared network): alive, and no policy consulted.
		return ProxyError, cmp.Or(msg, "407 proxy authentication required")
	case a.Status >= 500:
		// The proxy answered (plain HTTP, or to the CONNECT) but could not reach upstream.
		return ProxyError, cmp.Or(msg, fmt.Sprintf("%d %s", a.Status, a.ProxyError))
	case a.Exit == 97 && strings.HasSuffix(strings.TrimSpace(msg), ". (2)"):
		// SOCKS5 reply 2: "connection not allowed by ruleset".
		return PolicyBlocked, msg
	case a.Exit == 97 && socksReply.MatchString(msg):
		// Any other SOCKS5 reply code: the proxy answered, its upstream failed.
		return ProxyError, msg
	case a.Exit == 7 || a.Exit == 97 && strings.Contains(msg, "Failed to connect"):
		return ProxyRefused, msg
	case a.Exit == 52 || a.Exit == 56 || a.Exit == 97 || a.Exit == 35:
		// 52 empty reply, 56 recv failure / reset, 97 SOCKS handshake cut, 35 TLS cut mid-tunnel.
		return ProxyEmpty, msg
	case a.Exit == 5:
		return ProxyRefused, msg // the proxy's own name did not resolve: nothing to connect to
	case a.Exit == 28:
		return ProxyEmpty, msg // accepted, then silence until the deadline
	}
	if msg == "" {
		msg = fmt.Sprintf("status %d, body %.60q", a.Status, a.Body)
	}
	return Unexplained, msg
}
