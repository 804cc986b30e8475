package classify

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

const (
	allowed = model.RoleAllowed
	denied  = model.RoleDenied
)

// Network is the input for classifying one network trial.
type Network struct {
	Session
	Tokens map[string]string // role -> token the fixture host answers
	// Reach lists the channels over which the allowed host must be reachable for this target
	// (e.g. http, https, socks through srt's proxies). Denied must be unreachable over all.
	// Empty means a deny-all sandbox: the allowed host must be unreachable too, on every channel.
	Reach []string
	// Channels the probe was asked to try (model.AllChannels when empty). Each, and each of
	// Reach, must be reported for both hosts: a missing one is never a pass.
	Channels []string
	// Nonce is the trial's nonce (Obs.Nonce when empty): every probe request carries it, which
	// is how the servers' log is matched to the probe's report.
	Nonce string
	// Hits is everything the fixture servers logged while the sandbox ran (server-side proof).
	Hits []model.Hit
}

// ChannelResult is the classification restricted to one channel.
type ChannelResult struct {
	Channel string        `json:"channel"`
	Allowed Verdict       `json:"allowed"`
	Denied  Verdict       `json:"denied"`
	Outcome model.Outcome `json:"outcome"`
	Hint    string        `json:"hint,omitempty"`
	Server  string        `json:"server,omitempty"` // what the fixture servers logged for this channel
	// Egress lists the hits counted as egress (Result.Egress) that this channel's verdict
	// accounts for: a non-enforcing channel names the hits of its own requests.
	Egress []string `json:"egress,omitempty"`
}

// Result is the verdict of a network trial.
type Result struct {
	Outcome  model.Outcome            `json:"outcome"`
	Hint     string                   `json:"hint"`
	Channels map[string]ChannelResult `json:"channels"`
	// Egress lists the servers' hits counted as egress, one line each (model.Hit.String).
	Egress []string `json:"egress,omitempty"`
}

// side is one probe request as both ends saw it.
type side struct {
	reported bool // the probe reported this request
	v        Verdict
	detail   string
	a        probe.Attempt
	logged   []model.Hit // the fixture server's record of it
}

// ClassifyNetwork decides the outcome of a network trial, overall and per channel. What the
// fixture servers logged is read first: egress makes the trial non-enforcing whatever else
// happened. Then the trial must have run and reported every request; then `correct` needs, on
// every promised channel, the allowed token seen by the client and the request logged by the
// allowed host, and every denied request refused.
func ClassifyNetwork(in Network) Result {
	r := Result{Channels: map[string]ChannelResult{}}
	nonce := in.Nonce
	if nonce == "" && in.Obs != nil {
		nonce = in.Obs.Nonce
	}
	log := readServerLog(in.Hits, nonce)
	reach := map[string]bool{}
	for _, c := range in.Reach {
		reach[c] = true
	}
	denyAll := len(in.Reach) == 0
	var order []string
	egress := log.egress(reach, denyAll)
	isEgress := map[model.Hit]bool{}
	for _, h := range egress {
		r.Egress = append(r.Egress, h.String())
		isEgress[h] = true
	}
	explained := map[model.Hit]bool{}
	if in.Obs != nil {
		order = judgeChannels(in, log, reach, nonce, r.Channels, explained, isEgress)
	}
	pre, preHint, stop := in.Preconditions()

	// Evidence first: nothing else that happened can outweigh it.
	var hints []string
	for _, ch := range order {
		if c := r.Channels[ch]; c.Outcome == model.NonEnforcing {
			hints = append(hints, ch+": "+c.Hint)
		}
	}
	var unexplained []model.Hit
	for _, h := range egress {
		if !explained[h] {
			unexplained = append(unexplained, h)
		}
	}
	if len(hints) > 0 || len(unexplained) > 0 {
		hints = append(hints, log.egressHint(unexplained)...)
		if stop {
			hints = append(hints, "also: "+preHint)
			evidenceOnlyChannels(in, log, reach, denyAll, pre, preHint, r.Channels, isEgress)
		}
		r.Outcome, r.Hint = model.NonEnforcing, strings.Join(hints, "; ")
		return r
	}
	if stop {
		r.Channels = map[string]ChannelResult{}
		r.Outcome, r.Hint = pre, preHint
		return r
	}
	if h := reportProblems(in, nonce); h != "" {
		r.Channels = map[string]ChannelResult{}
		r.Outcome, r.Hint = model.HarnessError, h
		return r
	}

	// Overall: a dead proxy (which explains failures on every proxy channel at once) first;
	// then policy trouble; harness doubts last.
	var outs []model.Outcome
	for _, ch := range order {
		outs = append(outs, r.Channels[ch].Outcome)
	}
	r.Outcome = model.Worst(outs...)
	if r.Outcome == model.NotApplicable {
		r.Outcome, r.Hint = model.HarnessError, "no channel was tried"
		return r
	}
	hints = nil
	for _, ch := range order {
		if c := r.Channels[ch]; c.Outcome == r.Outcome && c.Hint != "" {
			hints = append(hints, ch+": "+c.Hint)
		}
	}
	if r.Outcome == model.ProxyDead {
		hints = append([]string{proxyDeadCause(in.Obs)}, hints...)
	}
	if r.Outcome == model.Correct {
		hints = []string{"allowed reachable via " + strings.Join(in.Reach, ", ") + " (token seen, request logged by the allowed host); denied refused on every channel"}
		if denyAll {
			hints = []string{"deny-all: both hosts blocked on every channel, no route out, nothing logged by the fixture servers"}
		}
	}
	r.Hint = strings.Join(dedupe(hints), "; ")
	return r
}

// judgeChannels classifies every channel the probe reported, in the order it tried them, and
// marks the hits that a non-enforcing channel's hint already names.
func judgeChannels(in Network, log serverLog, reach map[string]bool, nonce string, out map[string]ChannelResult, explained, isEgress map[model.Hit]bool) []string {
	denyAll := len(in.Reach) == 0
	sides := map[pair]side{}
	var order []string
	seen := map[string]bool{}
	var crossed []side
	for _, a := range in.Obs.Attempts {
		if !seen[a.Channel] {
			seen[a.Channel] = true
			order = append(order, a.Channel)
		}
		v, d := VerdictOf(a, in.Tokens)
		// A token that is not the addressed host's own means traffic was redirected. Whatever
		// was asked, the denied host's token coming back is egress to the denied host.
		if v == Reached && d != a.Role && a.Channel != model.ChanDNS {
			if d == denied {
				crossed = append(crossed, side{v: Reached, detail: "asked the " + a.Role + " host, the denied host answered", a: a})
			}
			v, d = Unexplained, fmt.Sprintf("asked %s, got %s's token", a.Role, d)
		}
		if denyAll && v == Unexplained && a.Exit == 6 && !offProxy(a.Channel) {
			// A deny-all sandbox may refuse even name resolution (Codex's seccomp filter stops
			// the resolver's netlink socket): curl's "could not resolve host" is no way out.
			v, d = NoRoute, "name not resolvable inside: "+d
		}
		p := pair{a.Channel, a.Role}
		sides[p] = side{reported: true, v: v, detail: d, a: a, logged: log.logged(p, a)}
	}
	for _, c := range crossed {
		p := pair{c.a.Channel, denied}
		s := sides[p]
		s.v, s.detail = c.v, c.detail
		sides[p] = s
	}
	for _, ch := range order {
		al, de := sides[pair{ch, allowed}], sides[pair{ch, denied}]
		cr := ChannelResult{Channel: ch, Allowed: al.v, Denied: de.v, Server: serverNote(al.logged, de.logged)}
		cr.Outcome, cr.Hint = judge(ch, reach[ch], denyAll, al, de, nonce)
		if cr.Outcome == model.NonEnforcing {
			for _, h := range append(append([]model.Hit{}, al.logged...), de.logged...) {
				explained[h] = true
				if isEgress[h] {
					cr.Egress = append(cr.Egress, h.String())
				}
			}
		}
		out[ch] = cr
	}
	return order
}

// judge classifies one channel from both ends of its two requests.
func judge(ch string, mustReach, denyAll bool, al, de side, nonce string) (model.Outcome, string) {
	// Egress first: the denied host reached, by the client's word or the server's.
	switch {
	case de.v == Reached:
		return model.NonEnforcing, "denied host reached (" + reachedDetail(de) + loggedNote(de.logged) + ")"
	case len(de.logged) > 0:
		return model.NonEnforcing, fmt.Sprintf("denied host received %s, although the client saw %s (%s)", DescribeHits(RequestHits(de.logged)), de.v, de.detail)
	case denyAll && (al.v == Reached || len(al.logged) > 0):
		return model.NonEnforcing, "allowed host reached although the sandbox denies all network (" + reachNote(al) + ")"
	case !mustReach && offProxy(ch) && (al.v == Reached || len(al.logged) > 0):
		return model.NonEnforcing, "allowed host reachable without the proxy: network namespace not isolated (" + reachNote(al) + ")"
	}
	if !al.reported || !de.reported {
		return model.HarnessError, "not reported by the probe"
	}
	if h := contradiction(ch, al, de, nonce); h != "" {
		return model.HarnessError, h
	}
	if denyAll {
		return decideDenyAll(al.v, al.detail, de.v, de.detail)
	}
	if mustReach && (al.v == Skipped || de.v == Skipped) {
		return model.HarnessError, "a channel the target promises was not tried: " + cmp.Or(pick(al.v, al.detail, Skipped), de.detail)
	}
	return decideChannel(ch, mustReach, al.v, al.detail, de.v, de.detail)
}

// contradiction names a request on which client and server tell different stories. A denied
// request either of them shows reached was egress, decided before; what is left for the denied
// host is a connect the client saw accepted that its server never logged.
func contradiction(ch string, al, de side, nonce string) string {
	if al.v == Reached && len(al.logged) == 0 {
		how := ""
		if al.detail != allowed {
			how = " (" + al.detail + ")"
		}
		return fmt.Sprintf("client: the allowed token came back over %s%s; server: the allowed host logged no %s", ch, how, requestPath(ch, nonce))
	}
	for _, s := range []struct {
		role string
		side
	}{{allowed, al}, {denied, de}} {
		if s.v == Accepted && len(s.logged) == 0 {
			return fmt.Sprintf("client: the direct connection to the %s host was accepted (%s); server: the %s host logged no connection", s.role, s.detail, s.role)
		}
	}
	if len(al.logged) > 0 && (al.v == PolicyBlocked || al.v == ProxyRefused || al.v == NoRoute && ch != model.ChanDNS) {
		// A DNS reply may be dropped on its way back in; a refusal cannot have reached the host.
		return fmt.Sprintf("client: %s over %s (%s); server: the allowed host logged %s", al.v, ch, al.detail, DescribeHits(RequestHits(al.logged)))
	}
	return ""
}

// reportProblems is what keeps a trial that ran from being judged at all: the probe's own
// trouble, a report for another nonce, requests it was asked for and did not report.
func reportProblems(in Network, nonce string) string {
	if len(in.Obs.Problems) > 0 {
		return "probe: " + strings.Join(in.Obs.Problems, "; ")
	}
	if nonce != "" && in.Obs.Nonce != nonce {
		return fmt.Sprintf("observation carries nonce %q, the trial's is %q", in.Obs.Nonce, nonce)
	}
	if m := missingPairs(in); len(m) > 0 {
		return "probe did not report " + strings.Join(m, ", ") + " (channel/host): missing evidence is never a pass"
	}
	return ""
}

// missingPairs lists the channel x host requests that were asked for (every channel the probe
// was given and every channel the target promises, against both hosts) but not reported.
func missingPairs(in Network) []string {
	asked := in.Channels
	if len(asked) == 0 {
		asked = model.AllChannels
	}
	want := append([]string{}, asked...)
	for _, c := range in.Reach {
		if !contains(want, c) {
			want = append(want, c)
		}
	}
	got := map[pair]bool{}
	for _, a := range in.Obs.Attempts {
		got[pair{a.Channel, a.Role}] = true
	}
	var out []string
	for _, ch := range want {
		for _, role := range []string{allowed, denied} {
			if !got[pair{ch, role}] {
				out = append(out, pair{ch, role}.String())
			}
		}
	}
	return out
}

// evidenceOnlyChannels fills in, for a trial that was cut short, the channels its evidence
// speaks for (non-enforcing) and gives every other channel it was asked for the reason it could
// not be judged: only evidence of egress outlives such a trial, never a pass.
func evidenceOnlyChannels(in Network, log serverLog, reach map[string]bool, denyAll bool, pre model.Outcome, preHint string, out map[string]ChannelResult, isEgress map[model.Hit]bool) {
	asked := in.Channels
	if len(asked) == 0 {
		asked = model.AllChannels
	}
	for ch, c := range out {
		if c.Outcome != model.NonEnforcing {
			c.Outcome, c.Hint = pre, preHint
			out[ch] = c
		}
	}
	for _, ch := range asked {
		if _, ok := out[ch]; ok {
			continue
		}
		var ev []model.Hit
		for _, role := range []string{allowed, denied} {
			for _, h := range log.byPair[pair{ch, role}] {
				if h.Egress() || denyAll || offProxy(ch) && !reach[ch] {
					ev = append(ev, h)
				}
			}
		}
		if len(ev) > 0 {
			cr := ChannelResult{Channel: ch, Outcome: model.NonEnforcing, Hint: "fixture servers logged " + DescribeHits(RequestHits(ev)), Server: DescribeHits(ev)}
			for _, h := range ev {
				if isEgress[h] {
					cr.Egress = append(cr.Egress, h.String())
				}
			}
			out[ch] = cr
			continue
		}
		out[ch] = ChannelResult{Channel: ch, Outcome: pre, Hint: preHint}
	}
}

// reachedDetail says how the client saw a host reached.
func reachedDetail(s side) string {
	if s.detail == s.a.Role {
		return "its token came back"
	}
	return s.detail
}

// reachNote says how a host was reached: the token seen, or the server's record.
func reachNote(s side) string {
	if s.v == Reached {
		return reachedDetail(s) + loggedNote(s.logged)
	}
	return fmt.Sprintf("the client saw %s, the host logged %s", s.v, DescribeHits(RequestHits(s.logged)))
}

func loggedNote(hits []model.Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return "; logged: " + DescribeHits(RequestHits(hits))
}

func serverNote(al, de []model.Hit) string {
	var s []string
	if len(al) > 0 {
		s = append(s, "allowed host logged "+DescribeHits(RequestHits(al)))
	}
	if len(de) > 0 {
		s = append(s, "denied host logged "+DescribeHits(RequestHits(de)))
	}
	return strings.Join(s, "; ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
