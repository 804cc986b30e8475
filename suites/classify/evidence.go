package classify

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The server-side rules. What the fixture servers logged is read before anything the probe
// says: the servers are outside the sandbox, so nothing that runs inside can make them forget a
// request. Their log does two jobs. Any hit that reached something other than the allowed host is
// egress, whatever else the trial shows (a timeout, a crash, junk output). And the allowed host's
// record of each request is the server half of `correct`'s positive proof.

// pair is one probe request: a channel tried against the host of one role.
type pair struct{ ch, role string }

func (p pair) String() string { return p.ch + "/" + p.role }

// serverLog is the fixture servers' log sorted out against one trial's probe requests.
type serverLog struct {
	// byPair holds the hits of each probe request: the request itself (its path or DNS name
	// carries the trial's nonce) and the TCP/TLS hits of the same connection.
	byPair map[pair][]model.Hit
	// silent holds, per role, accepted connections (and ClientHellos) that carried no request
	// of this trial: a connection let out and then cut, or a client that never sent a request.
	silent map[string][]model.Hit
	// other holds the rest: requests of another nonce, names asked that no probe request asks,
	// datagrams that are not DNS.
	other []model.Hit
	// pairOf is the inverse of byPair.
	pairOf map[model.Hit]pair
}

// readServerLog attributes each hit to the probe request that caused it, where it can.
func readServerLog(hits []model.Hit, nonce string) serverLog {
	l := serverLog{byPair: map[pair][]model.Hit{}, silent: map[string][]model.Hit{}, pairOf: map[model.Hit]pair{}}
	conn := map[string]pair{} // role + client address -> the request that connection carried
	for _, h := range hits {
		if p, ok := requestOf(h, nonce); ok {
			l.byPair[p] = append(l.byPair[p], h)
			l.pairOf[h] = p
			conn[h.Role+" "+h.From] = p
		}
	}
	for _, h := range hits {
		switch h.Proto {
		case model.ProtoTCP, model.ProtoTLS:
			if p, ok := conn[h.Role+" "+h.From]; ok {
				l.byPair[p] = append(l.byPair[p], h)
				l.pairOf[h] = p
			} else {
				l.silent[h.Role] = append(l.silent[h.Role], h)
			}
		default:
			if _, ok := requestOf(h, nonce); !ok {
				l.other = append(l.other, h)
			}
		}
	}
	return l
}

// requestOf names the probe request a hit is, from the path (or DNS name) the probe gives every
// request: /<channel>/<nonce>, q-<nonce>.<role>.<domain>.
func requestOf(h model.Hit, nonce string) (pair, bool) {
	if nonce == "" {
		return pair{}, false
	}
	switch h.Proto {
	case model.ProtoHTTP, model.ProtoHTTPS:
		ch, n, ok := strings.Cut(strings.TrimPrefix(h.Path, "/"), "/")
		if ok && n == nonce && knownChannel(ch) {
			return pair{ch, h.Role}, true
		}
	case model.ProtoDNS:
		if strings.EqualFold(strings.TrimSuffix(h.Path, "."), probe.DNSName(nonce, h.Role)) {
			return pair{model.ChanDNS, h.Role}, true
		}
	}
	return pair{}, false
}

func knownChannel(ch string) bool {
	for _, c := range model.AllChannels {
		if c == ch {
			return true
		}
	}
	return false
}

// logged is the server's record of one probe request. For the direct channel, when the client
// says its connect was accepted but no request of it was logged, the role's silent connections
// to port 80 are that connect: accepted, then cut before the request or the reply got through.
func (l serverLog) logged(p pair, a probe.Attempt) []model.Hit {
	hits := l.byPair[p]
	if len(hits) == 0 && p.ch == model.ChanDirect && a.Connected {
		for _, h := range l.silent[p.role] {
			if h.Proto == model.ProtoTCP && h.Port == 80 {
				hits = append(hits, h)
			}
		}
	}
	return hits
}

// egress lists the hits that are traffic the policy does not allow, whatever the probe says:
// every hit Egress calls so as it arrives, and the allowed host's own record of any request of
// this trial that came without the proxy (direct, DNS) where the target offers no such way out,
// or, for a deny-all sandbox, of any request of this trial at all.
func (l serverLog) egress(reach map[string]bool, denyAll bool) []model.Hit {
	var out []model.Hit
	seen := map[model.Hit]bool{}
	add := func(h model.Hit) {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	promised := make([]string, 0, len(reach))
	for ch, ok := range reach {
		if ok {
			promised = append(promised, ch)
		}
	}
	if denyAll {
		promised = nil
	}
	for p, hits := range l.byPair {
		for _, h := range hits {
			if Egress(h, promised) || offProxy(p.ch) && !reach[p.ch] {
				add(h)
			}
		}
	}
	for _, hits := range l.silent {
		for _, h := range hits {
			if Egress(h, promised) {
				add(h)
			}
		}
	}
	for _, h := range l.other {
		if Egress(h, promised) {
			add(h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// Egress says, as a hit arrives, whether it is traffic the target's policy does not allow: a hit
// on anything but the allowed host; for a deny-all target (reach empty) any hit at all; and the
// allowed host reached by a probe request over a channel that goes around any proxy (direct, DNS)
// which the target does not promise. A trial streams such hits to the runner as they come
// (wire/frame), so that a trial killed before it reports still leaves them behind; the
// classifier counts the same hits, so each streamed hit is one a verdict can account for.
func Egress(h model.Hit, reach []string) bool {
	if h.Egress() || len(reach) == 0 {
		return true
	}
	ch, ok := probeChannel(h)
	return ok && offProxy(ch) && !slices.Contains(reach, ch)
}

// probeChannel is the channel of a probe request, whatever its nonce, from the path (or DNS name)
// the probe gives every request: /<channel>/<nonce>, q-<nonce>.<role>.<domain>.
func probeChannel(h model.Hit) (string, bool) {
	switch h.Proto {
	case model.ProtoHTTP, model.ProtoHTTPS:
		ch, _, ok := strings.Cut(strings.TrimPrefix(h.Path, "/"), "/")
		return ch, ok && knownChannel(ch)
	case model.ProtoDNS:
		// probe.DNSName with the nonce left out: "q-" and "." + role + "." + domain.
		name := strings.ToLower(strings.TrimSuffix(h.Path, "."))
		prefix, suffix, _ := strings.Cut(probe.DNSName("\x00", h.Role), "\x00")
		return model.ChanDNS, len(name) > len(prefix)+len(suffix) && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
	}
	return "", false
}

// egressHint names egress no judged channel explains (the probe never reported, or the hits
// match none of its requests): by channel where the request path says which, then the rest.
func (l serverLog) egressHint(hits []model.Hit) []string {
	by := map[string][]model.Hit{}
	var rest []model.Hit
	for _, h := range hits {
		if p, ok := l.pairOf[h]; ok {
			by[p.ch] = append(by[p.ch], h)
		} else {
			rest = append(rest, h)
		}
	}
	var out []string
	for _, ch := range model.AllChannels {
		if len(by[ch]) > 0 {
			out = append(out, ch+": fixture servers logged "+DescribeHits(RequestHits(by[ch])))
		}
	}
	if len(rest) > 0 {
		out = append(out, "fixture servers logged egress: "+DescribeHits(RequestHits(rest)))
	}
	return out
}

// offProxy says whether a channel goes around any proxy: reaching even the allowed host over it
// means the sandbox's network namespace is not isolated, unless the target promises the channel.
func offProxy(ch string) bool { return ch == model.ChanDirect || ch == model.ChanDNS }

// RequestHits keeps the requests (and DNS queries) of a request's hits, dropping the TCP/TLS
// hits of their connection, so a hint names the path; a connection with no request stays.
func RequestHits(hits []model.Hit) []model.Hit {
	var out []model.Hit
	for _, h := range hits {
		if h.Proto != model.ProtoTCP && h.Proto != model.ProtoTLS {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return hits
	}
	return out
}

// DescribeHits renders hits for a hint: host, protocol and path, at most three.
func DescribeHits(hits []model.Hit) string {
	var s []string
	for i, h := range hits {
		if i == 3 {
			s = append(s, fmt.Sprintf("(+%d more)", len(hits)-i))
			break
		}
		s = append(s, hitLine(h))
	}
	return strings.Join(s, ", ")
}

// hitLine is one hit in a hint's words: "denied.sandcheck.test:80 http GET /http/ab12".
func hitLine(h model.Hit) string {
	where := h.Host
	if where == "" && h.Role == model.RoleDNS {
		where = "resolver"
	} else if where == "" {
		where = h.Role
	}
	if h.Port != 0 {
		where += fmt.Sprintf(":%d", h.Port)
	}
	s := where + " " + h.Proto
	if h.Detail != "" {
		s += " " + h.Detail
	}
	if h.Path != "" {
		s += " " + h.Path
	}
	return s
}

// requestPath is what the allowed host must have logged for a request over ch: the server half
// of the positive proof, named in hints.
func requestPath(ch, nonce string) string {
	if ch == model.ChanDNS {
		return "a query for " + probe.DNSName(nonce, model.RoleAllowed)
	}
	return probe.RequestPath(ch, nonce)
}
