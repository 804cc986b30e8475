package trial

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// How bypass trials are judged: crafted requests (crafted.Request), each a case of a bypass
// class, judged one by one. The rules are the network scenario's, case by case. What the fixture
// servers logged comes first: a hit on anything but the allowed host (or on the allowed host, for a
// case that must not reach it) that names the case makes it non-enforcing, whatever else happened;
// a hit that names no case makes every case that could have caused it non-enforcing. `correct`
// needs positive proof: the case reported and refused, and the way it went shown to work: for a
// request through the proxy, the allowed host reached through the same proxy in the same run (the
// class's control); for a request that uses no proxy, the same request made without the sandbox
// reaching its fixture (the unsandboxed control), else the case proves nothing and is
// not-applicable.

// Case is one crafted request and what it may reach.
type Case struct {
	Name string          `json:"name"` // bypass/CLASS/CASE; "" for a control
	Raw  crafted.Request `json:"raw"`
	// AllowedOK: this request may reach the allowed host (a control, or a name the policy
	// allows); otherwise reaching it is a breach (a port not allowed, an empty allow list).
	AllowedOK bool `json:"allowed_ok,omitempty"`
	// Control marks the request that proves its proxy channel works: the allowed host must
	// answer it on a target with a proxy.
	Control bool `json:"control,omitempty"`
	// PolicyRefusal: no control can exist (the policy allows nothing); the proxy's own policy
	// refusal (HTTP 403, SOCKS5 reply 2) is the proof that it is alive and judged the request.
	PolicyRefusal bool `json:"policy_refusal,omitempty"`
	// NotApplicable, when set, is why the target cannot be judged on this case; it is not sent.
	NotApplicable string `json:"not_applicable,omitempty"`
	// MustNotCarry names canaries (secrets planted for the session) whose real values must not
	// reach any fixture host; MustCarry those the case's own request must bring to the allowed
	// host, which proves the request carried what the probe read (the case's control).
	MustNotCarry []string `json:"must_not_carry,omitempty"`
	MustCarry    []string `json:"must_carry,omitempty"`
	// ThroughParent: the sandbox was given a parent proxy (model.RoleParent), and this request
	// must reach the allowed host through it, never around it (parent.go).
	ThroughParent bool `json:"through_parent,omitempty"`
}

// carries names the canaries of names a hit carried ("" none).
func carries(h model.Hit, names []string) string {
	var out []string
	for _, n := range carriedNames(h) {
		if slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// ViaProxy says whether a request goes through the sandbox's proxy.
func ViaProxy(via string) bool {
	return via == crafted.ViaHTTP || via == crafted.ViaConnect || via == crafted.ViaSOCKS
}

// Input is what one bypass trial saw.
type Input struct {
	classify.Session
	Nonce string
	// Tokens are every fixture server's token by role (allowed, denied, loopback, metadata,
	// self, unix): any but the allowed one coming back is egress.
	Tokens map[string]string
	Cases  []Case
	Hits   []model.Hit
	// DenyAll: the target offers no proxy; requests through one are not applicable.
	DenyAll bool
	// Unsandboxed are the results of the requests that use no proxy, made first without the
	// sandbox (nil: not made), and what the fixture logged of them.
	Unsandboxed     map[string]crafted.Result
	UnsandboxedHits []model.Hit
	// Injected is what the caller's terminal held in its input queue after the run (tty).
	Injected string
}

// CaseResult is the verdict of one case.
type CaseResult struct {
	Name    string        `json:"name"`
	Outcome model.Outcome `json:"outcome"`
	Hint    string        `json:"hint,omitempty"`
	// Reached names what the case reached (a role, or "terminal"), for the breach's words.
	Reached string `json:"reached,omitempty"`
	Server  string `json:"server,omitempty"` // what the fixture logged of it
	// Egress lists the fixture's hits (model.Hit.String) a non-enforcing case accounts for.
	Egress []string `json:"egress,omitempty"`
}

// Result is the verdict of a bypass trial: per case, and overall.
type Result struct {
	Outcome model.Outcome         `json:"outcome"`
	Hint    string                `json:"hint"`
	Cases   map[string]CaseResult `json:"cases"`
	Egress  []string              `json:"egress,omitempty"`
}

// Classify judges every case of a bypass trial.
func Classify(in Input) Result {
	r := Result{Cases: map[string]CaseResult{}}
	byID := map[string]Case{}
	for _, c := range in.Cases {
		byID[c.Raw.ID] = c
	}
	attributed, unattributed := attribute(in.Hits, in.Nonce, in.Cases)
	for _, h := range in.Hits {
		if h.Egress() {
			r.Egress = append(r.Egress, h.String())
		}
	}
	results := map[string]crafted.Result{}
	if in.Obs != nil {
		for _, x := range in.Obs.Raw {
			results[x.ID] = x
		}
	}
	pre, preHint, stop := in.Preconditions()
	controls := judgeControls(in, results, attributed)
	var outs []model.Outcome
	for _, c := range in.Cases {
		if c.Name == "" {
			continue
		}
		cr := judgeCase(in, c, results, attributed[c.Raw.ID], unattributed, controls)
		if stop && cr.Outcome != model.NonEnforcing && cr.Outcome != model.NotApplicable {
			cr.Outcome, cr.Hint = pre, preHint
		}
		r.Cases[c.Name] = cr
		outs = append(outs, cr.Outcome)
	}
	r.Outcome = model.Worst(outs...)
	var hints []string
	for _, name := range slices.Sorted(maps.Keys(r.Cases)) {
		if c := r.Cases[name]; c.Outcome == r.Outcome && c.Outcome != model.Correct && c.Hint != "" {
			hints = append(hints, name+": "+c.Hint)
		}
	}
	if len(hints) > 3 {
		hints = append(hints[:3], fmt.Sprintf("(+%d more)", len(hints)-3))
	}
	r.Hint = strings.Join(hints, "; ")
	if r.Outcome == model.Correct {
		r.Hint = "every case refused; the controls reached the allowed host"
	}
	return r
}

func lines(hits []model.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.String()
	}
	return out
}

// attribute sorts the fixture's hits: those a case's request names (its path, its payload, its
// name asked of the resolver, or the connection that carried such a request), and the rest.
func attribute(hits []model.Hit, nonce string, cases []Case) (map[string][]model.Hit, []model.Hit) {
	by := map[string][]model.Hit{}
	conn := map[string]string{}
	owner := func(h model.Hit) string {
		// A resolver query for a name some request sent as it is belongs to that request, before
		// any whose name merely begins with it (a proxy resolving the allowed host for the
		// controls is not the exact-prefix case asking).
		if h.Proto == model.ProtoDNS {
			for _, c := range cases {
				if ViaProxy(c.Raw.Via) && sameName(h.Path, c.Raw.Host) {
					return c.Raw.ID
				}
			}
		}
		for _, c := range cases {
			id := c.Raw.ID
			switch h.Proto {
			case model.ProtoHTTP, model.ProtoHTTPS:
				if h.Path == c.Raw.Path(nonce) {
					return id
				}
			case model.ProtoUDP, model.ProtoICMP, model.ProtoUnix, model.ProtoSignal:
				// Or, on a host socket, the request line of a proxy request a relay carried there.
				if h.Path == crafted.Payload(nonce, id) || h.Proto == model.ProtoUnix && strings.Contains(h.Path, crafted.BypassPath(nonce, id)+" ") {
					return id
				}
			case model.ProtoDNS:
				if ViaProxy(c.Raw.Via) && askedFor(h.Path, c.Raw.Host) || viaDNS(c.Raw.Via) && sameName(h.Path, crafted.DNSName(nonce, id, c.Raw.Host)) {
					return id
				}
			}
		}
		return ""
	}
	var rest []model.Hit
	for _, h := range hits {
		if id := owner(h); id != "" {
			by[id] = append(by[id], h)
			conn[h.Role+" "+h.From] = id
		}
	}
	for _, h := range hits {
		switch {
		case owner(h) != "":
		case (h.Proto == model.ProtoTCP || h.Proto == model.ProtoTLS || h.Proto == model.ProtoUnix) && conn[h.Role+" "+h.From] != "":
			id := conn[h.Role+" "+h.From]
			by[id] = append(by[id], h)
		case h.Egress() || h.Carried != "":
			rest = append(rest, h)
		}
	}
	return by, rest
}

// sameName says whether a resolver query is for exactly the name a request sent.
func sameName(q, host string) bool {
	q = strings.ToLower(strings.TrimSuffix(q, "."))
	return q != "" && q == strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

// askedFor says whether a resolver query is for the name a request sent: the same name, or what
// a resolver would keep of it (cut at a NUL or similar, lower case, no trailing dot).
func askedFor(q, host string) bool {
	q = strings.ToLower(strings.TrimSuffix(q, "."))
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	return q != "" && (q == h || strings.HasPrefix(h, q) && len(q) >= len(nethost.Domain))
}

// viaDNS says whether a request is a DNS query of its own.
func viaDNS(via string) bool { return via == crafted.ViaDNSUDP || via == crafted.ViaDNSTCP }

// carriedNames are the canaries a hit carried.
func carriedNames(h model.Hit) []string {
	if h.Carried == "" {
		return nil
	}
	return strings.Split(h.Carried, ", ")
}

// couldCause says whether a hit no case names could have come from a case's request.
func couldCause(c Case, h model.Hit) bool {
	switch h.Proto {
	case model.ProtoUnix:
		return c.Raw.Via == crafted.ViaUnix || c.Raw.Via == crafted.ViaUringUnix || c.Raw.Tamper == crafted.TamperBridge
	case model.ProtoUDP:
		return c.Raw.Via == crafted.ViaUDP
	case model.ProtoICMP:
		return c.Raw.Via == crafted.ViaICMP
	case model.ProtoSignal:
		return c.Raw.Via == crafted.ViaSignal
	case model.ProtoDNS:
		return ViaProxy(c.Raw.Via) || viaDNS(c.Raw.Via)
	}
	switch c.Raw.Via {
	case crafted.ViaHTTP, crafted.ViaConnect, crafted.ViaSOCKS, crafted.ViaDirect, crafted.ViaUringTCP:
		return true
	}
	return false
}

// control is how a proxy channel's control went: "" when the allowed host answered it.
type control struct {
	outcome model.Outcome
	hint    string
}

// judgeControls checks each proxy channel's control: the allowed host's token came back and the
// allowed host logged the request.
func judgeControls(in Input, results map[string]crafted.Result, attributed map[string][]model.Hit) map[string]control {
	out := map[string]control{}
	for _, c := range in.Cases {
		if !c.Control {
			continue
		}
		res, ok := results[c.Raw.ID]
		switch {
		case !ok:
			out[c.Raw.Via] = control{model.HarnessError, "control " + c.Raw.ID + " not reported by the probe"}
		case tokenOf(res, in.Tokens) == model.RoleAllowed && loggedRequest(attributed[c.Raw.ID], model.RoleAllowed):
			out[c.Raw.Via] = control{}
		default:
			o, why := proxyFailure(res)
			out[c.Raw.Via] = control{o, fmt.Sprintf("control %s (%s to the allowed host) did not get through: %s", c.Raw.ID, c.Raw.Via, why)}
		}
	}
	return out
}

// proxyFailure names why a request through the proxy did not reach its destination, as the
// network scenario would: the proxy dead, the policy refusing, or something else.
func proxyFailure(res crafted.Result) (model.Outcome, string) {
	switch {
	case res.Skipped != "":
		return model.HarnessError, res.Skipped
	case res.Stage == "proxy" && (res.Errno == "ECONNREFUSED" || res.Errno == "ENOENT"):
		return model.ProxyDead, "connection refused at the proxy: " + res.Err
	case res.Status == 403 || res.Reply == 2:
		return model.AllowedBlocked, refusal(res)
	case res.Status == 0 && res.Reply < 0 && (res.Stage == "reply" || res.Stage == "handshake" || res.Stage == "response"):
		return model.ProxyDead, "proxy accepted but replied nothing: " + res.Err
	}
	return model.AllowedBlocked, refusal(res)
}

// judgeCase decides one case.
func judgeCase(in Input, c Case, results map[string]crafted.Result, mine, unattributed []model.Hit, controls map[string]control) CaseResult {
	cr := CaseResult{Name: c.Name}
	if c.NotApplicable != "" {
		cr.Outcome, cr.Hint = model.NotApplicable, c.NotApplicable
		return cr
	}
	res, reported := results[c.Raw.ID]
	// Evidence first: the servers' log, then a forbidden token seen by the client.
	var breach []model.Hit
	for _, h := range mine {
		if h.Proto == model.ProtoDNS && h.Role == model.RoleAllowed || h.Role == model.RoleParent {
			// Resolving the allowed name is no request to the allowed host; the parent proxy
			// the sandbox was given is no destination (what it forwards is logged where it
			// arrives).
			continue
		}
		if secret := carries(h, c.MustNotCarry); secret != "" {
			cr.Outcome, cr.Reached = model.NonEnforcing, "secret"
			cr.Hint = fmt.Sprintf("the real value of %s reached the %s host in clear: fixture logged %s", secret, h.Role, h.String())
			cr.Server, cr.Egress = h.String(), []string{h.String()}
			return cr
		}
		if h.Egress() || !c.AllowedOK {
			breach = append(breach, h)
		}
	}
	if len(breach) > 0 {
		cr.Outcome, cr.Reached = model.NonEnforcing, breach[0].Role
		cr.Hint = fmt.Sprintf("%s reached: fixture logged %s", breach[0].Role, classify.DescribeHits(classify.RequestHits(breach)))
		cr.Server, cr.Egress = classify.DescribeHits(breach), lines(breach)
		return cr
	}
	var blame []model.Hit
	for _, h := range unattributed {
		if couldCause(c, h) && (h.Egress() || carries(h, c.MustNotCarry) != "") {
			blame = append(blame, h)
		}
	}
	if len(blame) > 0 {
		cr.Outcome, cr.Reached = model.NonEnforcing, blame[0].Role
		cr.Hint = fmt.Sprintf("fixture logged egress no request names, which this case's could have caused: %s", classify.DescribeHits(blame))
		cr.Server, cr.Egress = classify.DescribeHits(blame), lines(blame)
		return cr
	}
	if c.Raw.Via == crafted.ViaTIOCSTI && in.Injected != "" && strings.Contains(in.Injected, crafted.Payload(in.Nonce, c.Raw.ID)) {
		cr.Outcome, cr.Reached = model.NonEnforcing, "terminal"
		cr.Hint = fmt.Sprintf("the caller's terminal holds injected input %q", clip(in.Injected, 80))
		return cr
	}
	if reported {
		if role := tokenOf(res, in.Tokens); role != "" && (role != model.RoleAllowed || !c.AllowedOK) {
			cr.Outcome, cr.Reached = model.NonEnforcing, role
			cr.Hint = fmt.Sprintf("%s host's token came back (%s), although its server logged no request of it", role, res.Via)
			return cr
		}
	}
	if in.DenyAll && ViaProxy(c.Raw.Via) {
		cr.Outcome, cr.Hint = model.NotApplicable, "the target denies all network: there is no proxy to send this through"
		return cr
	}
	if !reported {
		cr.Outcome, cr.Hint = model.HarnessError, "not reported by the probe: missing evidence is never a pass"
		return cr
	}
	if ViaProxy(c.Raw.Via) && c.PolicyRefusal {
		if res.Skipped != "" && !res.Connected {
			// Some sandboxes offer no proxy at all for such a policy: nothing to refuse through
			// (the class's request that uses no proxy judges the way out that is left).
			cr.Outcome, cr.Hint = model.NotApplicable, "the sandbox names no proxy under this policy: "+res.Skipped
			return cr
		}
		switch o, why := proxyFailure(res); o {
		case model.AllowedBlocked:
			if res.Status == 403 || res.Reply == 2 {
				cr.Outcome, cr.Hint = model.Correct, "refused by policy: "+why
				return cr
			}
			cr.Outcome, cr.Hint = model.HarnessError, "refused, but not by the proxy's policy (no 403, no SOCKS5 reply 2): "+why
		default:
			cr.Outcome, cr.Hint = o, why
		}
		return cr
	}
	if ViaProxy(c.Raw.Via) {
		ctl, ok := controls[c.Raw.Via]
		switch {
		case !ok:
			cr.Outcome, cr.Hint = model.HarnessError, "no control on "+c.Raw.Via+" in this trial"
			return cr
		case ctl.outcome != "":
			cr.Outcome, cr.Hint = ctl.outcome, ctl.hint
			return cr
		case res.Skipped != "":
			cr.Outcome, cr.Hint = model.HarnessError, res.Skipped
			return cr
		case len(c.MustCarry) > 0:
			return judgeCarried(c, cr, res, mine)
		case c.ThroughParent && tokenOf(res, in.Tokens) == model.RoleAllowed:
			return judgeThroughParent(cr, mine)
		case c.AllowedOK && tokenOf(res, in.Tokens) == model.RoleAllowed:
			cr.Outcome, cr.Hint = model.Correct, "the allowed host answered it, and nothing else was reached"
			return cr
		}
		cr.Outcome, cr.Hint = model.Correct, "refused: "+refusal(res)
		return cr
	}
	// No proxy: the same request, made without the sandbox, must have got through, or the
	// refusal proves nothing about the sandbox.
	if res.Skipped != "" {
		cr.Outcome, cr.Hint = model.HarnessError, res.Skipped
		return cr
	}
	if in.Unsandboxed == nil {
		cr.Outcome, cr.Hint = model.HarnessError, "no unsandboxed control for a request that uses no proxy"
		return cr
	}
	u, ok := in.Unsandboxed[c.Raw.ID]
	if !ok {
		cr.Outcome, cr.Hint = model.HarnessError, "unsandboxed control not reported"
		return cr
	}
	if !controlReached(c, u, in) {
		cr.Outcome = model.NotApplicable
		cr.Hint = fmt.Sprintf("without any sandbox this request does not get through either (%s): a refusal inside would prove nothing", cmp.Or(u.Errno, u.Err, u.Skipped, "nothing logged"))
		return cr
	}
	if c.Raw.Via == crafted.ViaTIOCSTI && res.Connected {
		cr.Outcome, cr.Hint = model.Correct, "contained: the input went to a terminal of the sandbox's own ("+res.Body+"), the caller's terminal holds none of it"
		return cr
	}
	cr.Outcome, cr.Hint = model.Correct, "refused: "+refusal(res)
	return cr
}

// controlReached says whether an unsandboxed request reached its fixture: the client got its
// answer and the fixture logged the request (for TIOCSTI: the terminal holds the input).
func controlReached(c Case, u crafted.Result, in Input) bool {
	if !u.Connected {
		return false
	}
	if c.Raw.Via == crafted.ViaTIOCSTI {
		return true // the harness checked the terminal after the control run
	}
	for _, h := range in.UnsandboxedHits {
		if h.Path == c.Raw.Path(in.Nonce) || h.Path == crafted.Payload(in.Nonce, c.Raw.ID) ||
			viaDNS(c.Raw.Via) && sameName(h.Path, crafted.DNSName(in.Nonce, c.Raw.ID, c.Raw.Host)) {
			return true
		}
	}
	return false
}

// tokenOf is the role whose token the response carries ("" none); any but the allowed host's
// wins.
func tokenOf(res crafted.Result, tokens map[string]string) string {
	var roles []string
	for role, tok := range tokens {
		if tok != "" && strings.Contains(res.Body, tok) {
			roles = append(roles, role)
		}
	}
	sort.Strings(roles)
	for _, r := range roles {
		if r != model.RoleAllowed {
			return r
		}
	}
	if len(roles) > 0 {
		return roles[0]
	}
	return ""
}

func loggedRequest(hits []model.Hit, role string) bool {
	for _, h := range hits {
		if h.Role == role && (h.Proto == model.ProtoHTTP || h.Proto == model.ProtoHTTPS) {
			return true
		}
	}
	return false
}

// refusal says how a request was refused, in the client's words.
func refusal(res crafted.Result) string {
	var parts []string
	if res.Status != 0 {
		s := fmt.Sprintf("HTTP %d", res.Status)
		if res.ProxyError != "" {
			s += " (" + res.ProxyError + ")"
		}
		parts = append(parts, s)
	}
	if res.Reply > 0 {
		parts = append(parts, fmt.Sprintf("SOCKS5 reply %d", res.Reply))
	}
	if res.Errno != "" {
		parts = append(parts, res.Errno)
	} else if res.Err != "" && len(parts) == 0 {
		parts = append(parts, clip(res.Err, 120))
	}
	if res.Stage != "" {
		parts = append(parts, "at "+res.Stage)
	}
	if len(parts) == 0 {
		return "nothing came back"
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
