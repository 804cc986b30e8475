package trial

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// Controls are the requests proving each proxy channel works: the allowed host through it, by
// name, or by address (byIP); the CONNECT one over TLS on port 443 where tlsConnect says so (a
// proxy that intercepts TLS in its tunnels reads nothing else there).
func Controls(f *nethost.Hosts, byIP, tlsConnect bool) []Case {
	var out []Case
	for _, via := range []string{crafted.ViaHTTP, crafted.ViaConnect, crafted.ViaSOCKS} {
		r := crafted.Request{ID: "control-" + via, Via: via, Host: f.Allowed.Name, Port: 80}
		if byIP {
			r = crafted.Request{ID: "control-" + via, Via: via, Host: f.Allowed.IP.String(), Port: 80, ATYP: 1}
		}
		if tlsConnect && via == crafted.ViaConnect {
			r.Port, r.TLSName = 443, f.Allowed.Name
		}
		out = append(out, Case{Raw: r, AllowedOK: true, Control: true})
	}
	return out
}

// Breach is what the failing case name (its id within its class) breached, in the terms known
// findings are keyed by: the check is VIA:ROLE for a case that reached something (VIA:terminal
// for injected input), VIA:proxy for a dead proxy, VIA:allowed for the control refused, else the
// trial.
func (t *Trial) Breach(name, id string, r CaseResult) model.Breach {
	via := ""
	for _, c := range t.Cases {
		if c.Name == name {
			via = c.Raw.Via
		}
	}
	b := model.Breach{Scenario: name, Outcome: r.Outcome}
	switch r.Outcome {
	case model.NonEnforcing:
		b.Check, b.Egress = via+":"+r.Reached, r.Egress
		b.What = fmt.Sprintf("%s: %s reached (%s)", id, r.Reached, via)
	case model.ProxyDead:
		b.Check, b.What = via+":proxy", fmt.Sprintf("%s: proxy dead (%s)", id, via)
	case model.AllowedBlocked:
		b.Check, b.What = via+":allowed", fmt.Sprintf("%s: the allowed host refused (%s)", id, via)
	default:
		b.Check, b.What = model.CheckTrial, fmt.Sprintf("%s: %s (%s)", id, r.Outcome, strings.TrimSpace(r.Hint))
	}
	return b
}
