package classify

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

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
	ProxyRefused  Verdict = "proxy-refused"  // nothing accepted a connection on the proxy port
	ProxyEmpty    Verdict = "proxy-empty"    // something accepted, then closed with no reply
	ProxyError    Verdict = "proxy-error"    // the proxy answered with an error that is not a policy refusal
	Skipped       Verdict = "skipped"        // the channel could not be tried here
	Unexplained   Verdict = "unexplained"    // none of the above: a harness question
)

// Network is the input for classifying one network trial.
type Network struct {
	Ran      bool               // SANDBOX-RAN marker seen
	Obs      *probe.Observation // nil when the probe never finished
	Exit     int                // sandbox exit status
	Stderr   string             // sandbox stderr (tail)
	TimedOut bool
	Tokens   map[string]string // role -> token the fixture host answers
	// Reach lists the channels over which the allowed host must be reachable for this target
	// (e.g. http, https, socks through srt's proxies). Denied must be unreachable over all.
	// Empty means a deny-all sandbox: the allowed host must be unreachable too, on every channel.
	Reach []string
	// DeniedHits are requests the denied fixture host received (server-side proof).
	DeniedHits []string
}

// ChannelResult is the classification restricted to one channel.
type ChannelResult struct {
	Channel string  `json:"channel"`
	Allowed Verdict `json:"allowed"`
	Denied  Verdict `json:"denied"`
	Outcome Outcome `json:"outcome"`
	Hint    string  `json:"hint,omitempty"`
}

// Result is the verdict of a network trial.
type Result struct {
	Outcome  Outcome                  `json:"outcome"`
	Hint     string                   `json:"hint"`
	Channels map[string]ChannelResult `json:"channels"`
}

// VerdictOf reads one attempt. Tokens decide "reached"; everything else is read from the
// client's own words (curl's exit code and message, HTTP status, proxy error header, errno).
func VerdictOf(a probe.Attempt, tokens map[string]string) (Verdict, string) {
	if a.Skipped != "" {
		return Skipped, a.Skipped
	}
	for role, tok := range tokens {
		if tok != "" && strings.Contains(a.Body, tok) {
			return Reached, role
		}
	}
	if a.Channel == probe.ChanDNS {
		if len(a.Resolved) > 0 {
			return Reached, "dns answered " + strings.Join(a.Resolved, ",")
		}
		return NoRoute, a.Err
	}
	if a.Channel == probe.ChanDirect {
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
		return PolicyBlocked, firstNonEmpty(a.ProxyError, msg, "403")
	case a.Status >= 500:
		// The proxy answered (plain HTTP, or to the CONNECT) but could not reach upstream.
		return ProxyError, firstNonEmpty(msg, fmt.Sprintf("%d %s", a.Status, a.ProxyError))
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

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// ClassifyNetwork decides the outcome of a network trial, overall and per channel.
func ClassifyNetwork(in Network) Result {
	r := Result{Channels: map[string]ChannelResult{}}
	if pre, hint, stop := preconditions(in.TimedOut, in.Ran, in.Obs != nil, in.Exit, in.Stderr); stop {
		r.Outcome, r.Hint = pre, hint
		return r
	}
	if len(in.Obs.Problems) > 0 {
		r.Outcome, r.Hint = HarnessError, "probe: "+strings.Join(in.Obs.Problems, "; ")
		return r
	}

	type seen struct {
		v      Verdict
		detail string
		a      probe.Attempt
	}
	byChan := map[string]map[string]seen{}
	var order []string
	var crossed []seen
	for _, a := range in.Obs.Attempts {
		v, d := VerdictOf(a, in.Tokens)
		if byChan[a.Channel] == nil {
			byChan[a.Channel] = map[string]seen{}
			order = append(order, a.Channel)
		}
		// A token that is not the addressed host's own means traffic was redirected. Whatever
		// was asked, the denied host's token coming back is egress to the denied host.
		if v == Reached && d != a.Role && a.Channel != probe.ChanDNS {
			if d == "denied" {
				crossed = append(crossed, seen{Reached, "asked the " + a.Role + " host, the denied host answered", a})
			}
			v, d = Unexplained, fmt.Sprintf("asked %s, got %s's token", a.Role, d)
		}
		if len(in.Reach) == 0 && v == Unexplained && a.Exit == 6 && a.Channel != probe.ChanDirect && a.Channel != probe.ChanDNS {
			// A deny-all sandbox may refuse even name resolution (Codex's seccomp filter stops
			// the resolver's netlink socket): curl's "could not resolve host" is no way out.
			v, d = NoRoute, "name not resolvable inside: "+d
		}
		byChan[a.Channel][a.Role] = seen{v, d, a}
	}
	for _, c := range crossed {
		byChan[c.a.Channel]["denied"] = c
	}
	reach := map[string]bool{}
	for _, c := range in.Reach {
		reach[c] = true
	}

	for _, ch := range order {
		al, de := byChan[ch]["allowed"], byChan[ch]["denied"]
		cr := ChannelResult{Channel: ch, Allowed: al.v, Denied: de.v}
		if len(in.Reach) == 0 {
			cr.Outcome, cr.Hint = decideDenyAll(al.v, al.detail, de.v, de.detail)
		} else {
			cr.Outcome, cr.Hint = decideChannel(ch, reach[ch], al.v, al.detail, de.v, de.detail)
		}
		r.Channels[ch] = cr
	}

	// Overall: a security finding anywhere wins; then a dead proxy (which explains failures on
	// every proxy channel at once); then policy trouble; harness doubts last.
	var outs []Outcome
	for _, ch := range order {
		outs = append(outs, r.Channels[ch].Outcome)
	}
	if len(in.DeniedHits) > 0 && r.Channels != nil {
		// The denied host itself saw a request: it egressed even if the reply never came back.
		found := false
		for _, ch := range order {
			if r.Channels[ch].Outcome == NonEnforcing {
				found = true
			}
		}
		if !found {
			r.Outcome, r.Hint = NonEnforcing, "denied host received "+strings.Join(in.DeniedHits, ", ")+" although no token came back"
			return r
		}
	}
	r.Outcome = Worst(outs...)
	if r.Outcome == NotApplicable {
		r.Outcome, r.Hint = HarnessError, "no channel was tried"
		return r
	}
	var hints []string
	for _, ch := range order {
		if c := r.Channels[ch]; c.Outcome == r.Outcome && c.Hint != "" {
			hints = append(hints, ch+": "+c.Hint)
		}
	}
	if r.Outcome == ProxyDead {
		hints = append([]string{proxyDeadCause(in.Obs)}, hints...)
	}
	if r.Outcome == Correct {
		hints = []string{"allowed reachable via " + strings.Join(in.Reach, ", ") + "; denied refused on every channel"}
		if len(in.Reach) == 0 {
			hints = []string{"deny-all: both hosts blocked on every channel, no route out"}
		}
	}
	r.Hint = strings.Join(dedupe(hints), "; ")
	return r
}

// decideChannel classifies one channel from its allowed and denied verdicts.
func decideChannel(ch string, mustReach bool, al Verdict, ald string, de Verdict, ded string) (Outcome, string) {
	if de == Reached {
		return NonEnforcing, "denied host reached (" + ded + ")"
	}
	if al == Skipped && de == Skipped {
		return NotApplicable, ald
	}
	dead := func(v Verdict) bool { return v == ProxyRefused || v == ProxyEmpty }
	if ch == probe.ChanDirect || ch == probe.ChanDNS {
		if !mustReach {
			// A way out that the policy does not offer: blocked is correct; reaching even the
			// allowed host means the namespace is not isolated.
			if al == Reached {
				return NonEnforcing, "allowed host reachable without the proxy: network namespace not isolated (" + ald + ")"
			}
			if de == NoRoute && (al == NoRoute || al == Skipped) {
				return Correct, ""
			}
			return HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
		}
	}
	switch {
	case dead(al) || dead(de):
		return ProxyDead, deadHint(al, ald, de, ded)
	case al == PolicyBlocked && mustReach:
		return AllowedBlocked, "allowed host refused by policy: " + ald
	case al == ProxyError && mustReach:
		return AllowedBlocked, "proxy failed the allowed host: " + ald
	case (al == Reached || !mustReach) && (de == PolicyBlocked || de == NoRoute):
		return Correct, ""
	}
	return HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
}

// decideDenyAll classifies one channel of a sandbox that allows no network at all: any token
// coming back is egress; any way of not getting through (no route, nothing listening on a proxy
// port the environment names, a refusal) is what such a sandbox promises.
func decideDenyAll(al Verdict, ald string, de Verdict, ded string) (Outcome, string) {
	switch {
	case de == Reached:
		return NonEnforcing, "denied host reached (" + ded + ")"
	case al == Reached:
		return NonEnforcing, "allowed host reached although the sandbox denies all network (" + ald + ")"
	case al == Skipped && de == Skipped:
		return NotApplicable, ald
	}
	blocked := func(v Verdict) bool {
		switch v {
		case NoRoute, ProxyRefused, ProxyEmpty, PolicyBlocked, ProxyError, Skipped:
			return true
		}
		return false
	}
	if blocked(al) && blocked(de) {
		return Correct, ""
	}
	return HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
}

func deadHint(al Verdict, ald string, de Verdict, ded string) string {
	switch {
	case al == ProxyRefused || de == ProxyRefused:
		return "connection refused at the proxy: " + firstNonEmpty(pick(al, ald, ProxyRefused), pick(de, ded, ProxyRefused))
	default:
		return "proxy accepted but replied nothing: " + firstNonEmpty(pick(al, ald, ProxyEmpty), pick(de, ded, ProxyEmpty))
	}
}

func pick(v Verdict, d string, want Verdict) string {
	if v == want {
		return d
	}
	return ""
}

// proxyDeadCause names the layer that died, from what was listening inside the sandbox and in
// what order the requests failed.
func proxyDeadCause(obs *probe.Observation) string {
	ports := proxyPorts(obs.ProxyEnv)
	listening := map[int]bool{}
	for _, l := range obs.Listeners {
		listening[l.Port] = true
	}
	var missing, present []string
	for _, p := range ports {
		if listening[p] {
			present = append(present, fmt.Sprint(p))
		} else {
			missing = append(missing, fmt.Sprint(p))
		}
	}
	var refusedFirst, reachedLater, emptyAfterOK bool
	sawOK := false
	for i, a := range obs.Attempts {
		if a.Channel == probe.ChanDirect || a.Channel == probe.ChanDNS || a.Skipped != "" {
			continue
		}
		v, _ := VerdictOf(a, nil)
		ok := a.Status != 0 && v != ProxyRefused && v != ProxyEmpty
		if i == 0 && v == ProxyRefused {
			refusedFirst = true
		}
		if i > 0 && ok && refusedFirst {
			reachedLater = true
		}
		if sawOK && v == ProxyEmpty {
			emptyAfterOK = true
		}
		if ok {
			sawOK = true
		}
	}
	switch {
	case len(ports) == 0:
		return "no proxy in the environment, yet requests failed at a proxy"
	case refusedFirst && reachedLater:
		return "proxy came up late: the first request was refused, later ones reached the proxy"
	case len(missing) > 0 && len(present) == 0:
		return fmt.Sprintf("in-sandbox bridge not listening on 127.0.0.1:%s; proxy env set but nothing behind it", strings.Join(missing, ","))
	case emptyAfterOK:
		return fmt.Sprintf("host-side bridge died mid-session: the in-sandbox relay on :%s accepted, then closed with no reply", strings.Join(present, ","))
	case len(present) > 0:
		return fmt.Sprintf("in-sandbox relay on :%s accepts but nothing answers behind it (host-side bridge or proxy gone)", strings.Join(present, ","))
	}
	return "proxy unreachable"
}

// proxyPorts lists the loopback ports the proxy environment points at.
func proxyPorts(env map[string]string) []int {
	set := map[int]bool{}
	for k, v := range env {
		if strings.EqualFold(k, "no_proxy") {
			continue
		}
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			var p int
			if _, err := fmt.Sscanf(strings.TrimRight(v[i+1:], "/"), "%d", &p); err == nil && p > 0 {
				set[p] = true
			}
		}
	}
	var out []int
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
