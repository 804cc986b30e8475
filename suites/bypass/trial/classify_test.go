package trial

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

const bn = "n0nce"

var bTokens = map[string]string{model.RoleAllowed: "tokA", model.RoleDenied: "tokD", model.RoleLoopback: "tokL"}

func bcase(name, id, via string) Case {
	return Case{Name: name, Raw: crafted.Request{ID: id, Via: via, Host: "x", Port: 80}}
}

func ctl(via string) Case {
	return Case{Raw: crafted.Request{ID: "control-" + via, Via: via, Host: "allowed.sandcheck.test", Port: 80}, Control: true, AllowedOK: true}
}

// reached is a probe result whose body carries a fixture's answer.
func reached(id, via, token string) crafted.Result {
	return crafted.Result{ID: id, Via: via, Reply: -1, Status: 200, Connected: true, Body: nethost.Body("x", token)}
}

func refused(id, via string) crafted.Result {
	return crafted.Result{ID: id, Via: via, Reply: -1, Status: 403, ProxyError: "blocked-by-allowlist", Stage: "reply"}
}

func logged(role, id string) model.Hit {
	return model.Hit{Role: role, Proto: model.ProtoHTTP, Path: crafted.BypassPath(bn, id), From: "198.18.0.1:1000"}
}

func bin(cases []Case, res []crafted.Result, hits ...model.Hit) Input {
	return Input{Session: classify.Session{Ran: true, Obs: &probe.Observation{Nonce: bn, Raw: res}}, Nonce: bn, Tokens: bTokens, Cases: cases, Hits: hits}
}

func TestClassify(t *testing.T) {
	sock := bcase("bypass/m/nul", "nul", crafted.ViaSOCKS)
	okCtl := []crafted.Result{reached("control-socks", crafted.ViaSOCKS, "tokA")}
	okHit := logged(model.RoleAllowed, "control-socks")
	cases := []struct {
		name string
		in   Input
		want model.Outcome
		hint string
	}{
		{"refused with a working control",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, crafted.Result{ID: "nul", Via: crafted.ViaSOCKS, Reply: 2, Stage: "reply"}), okHit),
			model.Correct, "SOCKS5 reply 2"},
		{"the denied host logged the case's path: non-enforcing even if the client saw a refusal",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, refused("nul", crafted.ViaSOCKS)), okHit, logged(model.RoleDenied, "nul")),
			model.NonEnforcing, "denied reached"},
		{"egress no request names blames the cases that could have caused it",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, refused("nul", crafted.ViaSOCKS)), okHit,
				model.Hit{Role: model.RoleDenied, Proto: model.ProtoTCP, From: "198.18.0.1:5", Detail: "accepted"}),
			model.NonEnforcing, "no request names"},
		{"a forbidden token seen by the client is egress",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, reached("nul", crafted.ViaSOCKS, "tokL")), okHit),
			model.NonEnforcing, "loopback host's token"},
		{"a refusal proves nothing when the control did not get through (proxy dead)",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, []crafted.Result{
				{ID: "control-socks", Via: crafted.ViaSOCKS, Reply: -1, Stage: "proxy", Errno: "ECONNREFUSED", Err: "connection refused"},
				refused("nul", crafted.ViaSOCKS)}),
			model.ProxyDead, "control"},
		{"the control's token without the allowed host's log is no proof",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, refused("nul", crafted.ViaSOCKS))),
			model.AllowedBlocked, "control"},
		{"a case the probe did not report is never a pass",
			bin([]Case{ctl(crafted.ViaSOCKS), sock}, okCtl, okHit),
			model.HarnessError, "not reported"},
		{"a trial that timed out keeps only evidence",
			func() Input {
				in := bin([]Case{ctl(crafted.ViaSOCKS), sock}, append(okCtl, refused("nul", crafted.ViaSOCKS)), okHit)
				in.TimedOut = true
				return in
			}(),
			model.Timeout, ""},
		{"a timed-out trial with the case's egress is non-enforcing",
			func() Input {
				in := bin([]Case{ctl(crafted.ViaSOCKS), sock}, nil, logged(model.RoleDenied, "nul"))
				in.Obs, in.TimedOut = nil, true
				return in
			}(),
			model.NonEnforcing, "denied reached"},
		{"the allowed host reached by a case that must not reach it (another port)",
			bin([]Case{ctl(crafted.ViaSOCKS), bcase("bypass/p/x", "x", crafted.ViaSOCKS)}, append(okCtl, reached("x", crafted.ViaSOCKS, "tokA")), okHit,
				model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: crafted.BypassPath(bn, "x"), Port: 8080}),
			model.NonEnforcing, "allowed reached"},
		{"a case that may reach the allowed host and only did is correct, and says where it went",
			bin([]Case{ctl(crafted.ViaSOCKS), {Name: "bypass/s/sni", Raw: crafted.Request{ID: "sni", Via: crafted.ViaSOCKS}, AllowedOK: true}},
				append(okCtl, reached("sni", crafted.ViaSOCKS, "tokA")), okHit, logged(model.RoleAllowed, "sni")),
			model.Correct, "the allowed host answered"},
		{"the denied host reached through the allowed host's front is the case's egress",
			bin([]Case{ctl(crafted.ViaSOCKS), {Name: "bypass/s/front", Raw: crafted.Request{ID: "front", Via: crafted.ViaHTTP, Front: "denied.sandcheck.test"}, AllowedOK: true}},
				append(okCtl, reached("front", crafted.ViaHTTP, "tokD")), okHit,
				model.Hit{Role: model.RoleDenied, Proto: model.ProtoHTTP, Path: model.FrontPrefix + bn + "/front", From: "198.18.0.1:7"},
				model.Hit{Role: model.RoleAllowed, Proto: model.ProtoTCP, From: "198.18.0.1:7"}),
			model.NonEnforcing, "denied reached"},
		{"policy refusal stands in for a control where none can exist",
			bin([]Case{{Name: "bypass/p/e", Raw: crafted.Request{ID: "e", Via: crafted.ViaHTTP}, PolicyRefusal: true}}, []crafted.Result{refused("e", crafted.ViaHTTP)}),
			model.Correct, "refused by policy"},
		{"a policy that should deny everything let the allowed host answer",
			bin([]Case{{Name: "bypass/p/a", Raw: crafted.Request{ID: "a", Via: crafted.ViaHTTP}, PolicyRefusal: true}},
				[]crafted.Result{reached("a", crafted.ViaHTTP, "tokA")}, logged(model.RoleAllowed, "a")),
			model.NonEnforcing, "allowed reached"},
		{"an empty reply is not a policy refusal",
			bin([]Case{{Name: "bypass/p/e", Raw: crafted.Request{ID: "e", Via: crafted.ViaHTTP}, PolicyRefusal: true}},
				[]crafted.Result{{ID: "e", Via: crafted.ViaHTTP, Reply: -1, Stage: "response", Err: "EOF"}}),
			model.ProxyDead, "replied nothing"},
		{"deny-all target: a proxy case is not applicable",
			func() Input {
				in := bin([]Case{sock}, nil)
				in.DenyAll = true
				return in
			}(),
			model.NotApplicable, "no proxy"},
	}
	for _, c := range cases {
		r := Classify(c.in)
		got := r.Cases[c.in.Cases[len(c.in.Cases)-1].Name]
		if got.Outcome != c.want || !strings.Contains(got.Hint, c.hint) {
			t.Errorf("%s: %s (%s), want %s with %q", c.name, got.Outcome, got.Hint, c.want, c.hint)
		}
	}
}

// A resolver query for the allowed name is the controls', not a case's whose name merely begins
// with it: Codex's proxy asks the resolver for the allowed host's AAAA, and the exact-prefix
// case (allowed.sandcheck.test.denied.sandcheck.test), refused, was blamed for it. In the order
// the trial lists them: the cases, then the controls.
func TestClassifyQueryForTheAllowedName(t *testing.T) {
	in := bin([]Case{{Name: "bypass/m/exact-prefix", Raw: crafted.Request{ID: "exact-prefix", Via: crafted.ViaConnect, Host: "allowed.sandcheck.test.denied.sandcheck.test", Port: 80}},
		ctl(crafted.ViaConnect)},
		[]crafted.Result{refused("exact-prefix", crafted.ViaConnect), reached("control-connect", crafted.ViaConnect, "tokA")},
		logged(model.RoleAllowed, "control-connect"),
		model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: "allowed.sandcheck.test", Detail: "AAAA", From: "198.18.0.1:53000"})
	if got := Classify(in).Cases["bypass/m/exact-prefix"]; got.Outcome != model.Correct {
		t.Errorf("exact-prefix: %s (%s), want correct", got.Outcome, got.Hint)
	}
	// A query for the case's own name, cut where a resolver would cut it, stays the case's.
	in = bin([]Case{{Name: "bypass/m/nul", Raw: crafted.Request{ID: "nul", Via: crafted.ViaSOCKS, Host: "denied.sandcheck.test\x00.wild.sandcheck.test", Port: 80}},
		ctl(crafted.ViaSOCKS)},
		[]crafted.Result{refused("nul", crafted.ViaSOCKS), reached("control-socks", crafted.ViaSOCKS, "tokA")},
		logged(model.RoleAllowed, "control-socks"),
		model.Hit{Role: model.RoleDenied, Proto: model.ProtoDNS, Path: "denied.sandcheck.test", Detail: "A", From: "198.18.0.1:53000"})
	if got := Classify(in).Cases["bypass/m/nul"]; got.Outcome != model.NonEnforcing {
		t.Errorf("nul: %s (%s), want non-enforcing (the cut name was asked of the resolver)", got.Outcome, got.Hint)
	}
}

// TestClassifyNoProxy: a request that uses no proxy is judged against its unsandboxed
// control: no control that got through, no judgement.
func TestClassifyNoProxy(t *testing.T) {
	udp := Case{Name: "bypass/o/udp", Raw: crafted.Request{ID: "udp", Via: crafted.ViaUDP, Addr: "198.18.0.3:7"}}
	in := func(u map[string]crafted.Result, uh []model.Hit, res crafted.Result, hits ...model.Hit) Input {
		x := bin([]Case{udp}, []crafted.Result{res}, hits...)
		x.Unsandboxed, x.UnsandboxedHits = u, uh
		return x
	}
	through := map[string]crafted.Result{"udp": {ID: "udp", Connected: true}}
	seen := []model.Hit{{Role: model.RoleDenied, Proto: model.ProtoUDP, Path: crafted.Payload(bn, "udp")}}
	blocked := crafted.Result{ID: "udp", Via: crafted.ViaUDP, Reply: -1, Stage: "send", Errno: "ENETUNREACH"}
	for _, c := range []struct {
		name string
		in   Input
		want model.Outcome
	}{
		{"refused, control got through", in(through, seen, blocked), model.Correct},
		{"control never ran", in(nil, nil, blocked), model.HarnessError},
		{"control did not get through either", in(map[string]crafted.Result{"udp": {ID: "udp", Errno: "EPERM"}}, nil, blocked), model.NotApplicable},
		{"control's client saw an answer the fixture never logged", in(through, nil, blocked), model.NotApplicable},
		{"the datagram reached the denied host", in(through, seen, blocked,
			model.Hit{Role: model.RoleDenied, Proto: model.ProtoUDP, Path: crafted.Payload(bn, "udp")}), model.NonEnforcing},
	} {
		if got := Classify(c.in).Cases[udp.Name]; got.Outcome != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Outcome, got.Hint, c.want)
		}
	}
	// A DNS query is judged by the resolver's log: its name carries the case.
	q := Case{Name: "bypass/d/udp", Raw: crafted.Request{ID: "dns.udp", Via: crafted.ViaDNSUDP, Host: "denied.sandcheck.test", Addr: "198.18.0.53:53"}}
	asked := model.Hit{Role: model.RoleDenied, Proto: model.ProtoDNS, Path: crafted.DNSName(bn, "dns.udp", "denied.sandcheck.test"), Port: 53}
	dnsIn := func(res crafted.Result, hits ...model.Hit) Input {
		x := bin([]Case{q}, []crafted.Result{res}, hits...)
		x.Unsandboxed = map[string]crafted.Result{"dns.udp": {ID: "dns.udp", Connected: true}}
		x.UnsandboxedHits = []model.Hit{asked}
		return x
	}
	noRoute := crafted.Result{ID: "dns.udp", Via: crafted.ViaDNSUDP, Reply: -1, Stage: "query", Errno: "ENETUNREACH"}
	if got := Classify(dnsIn(noRoute)).Cases[q.Name]; got.Outcome != model.Correct {
		t.Errorf("DNS query refused, its control answered: %s (%s)", got.Outcome, got.Hint)
	}
	if got := Classify(dnsIn(noRoute, asked)).Cases[q.Name]; got.Outcome != model.NonEnforcing || !strings.Contains(got.Hint, "denied reached") {
		t.Errorf("DNS query the resolver logged: %s (%s)", got.Outcome, got.Hint)
	}
	// A signal is judged by the sentinel's death, logged by its parent outside: the client
	// claiming a kill proves nothing, a death no request names is still the signalling case's.
	sig := Case{Name: "bypass/b/signal", Raw: crafted.Request{ID: "sig", Via: crafted.ViaSignal, Addr: crafted.Payload(bn, "sig")}}
	killed := model.Hit{Role: model.RoleSentinel, Proto: model.ProtoSignal, Path: crafted.Payload(bn, "sig"), Detail: "killed by SIGKILL", From: "pid 9"}
	sigIn := func(res crafted.Result, hits ...model.Hit) Input {
		x := bin([]Case{sig}, []crafted.Result{res}, hits...)
		x.Unsandboxed = map[string]crafted.Result{"sig": {ID: "sig", Connected: true}}
		x.UnsandboxedHits = []model.Hit{killed}
		return x
	}
	notInView := crafted.Result{ID: "sig", Via: crafted.ViaSignal, Reply: -1, Stage: "connect", Errno: "ESRCH", Err: "no process with the marker in view"}
	for _, c := range []struct {
		name string
		in   Input
		want model.Outcome
		hint string
	}{
		{"not in view, the control killed it", sigIn(notInView), model.Correct, "ESRCH"},
		{"the sentinel died", sigIn(notInView, killed), model.NonEnforcing, "sentinel reached"},
		{"a death its marker does not name", sigIn(notInView, model.Hit{Role: model.RoleSentinel, Proto: model.ProtoSignal, Path: "other", Detail: "killed by SIGKILL"}),
			model.NonEnforcing, "no request names"},
	} {
		if got := Classify(c.in).Cases[sig.Name]; got.Outcome != c.want || !strings.Contains(got.Hint, c.hint) {
			t.Errorf("signal, %s: %s (%s), want %s with %q", c.name, got.Outcome, got.Hint, c.want, c.hint)
		}
	}
	// Terminal input: only what reached the caller's terminal is an escape.
	tio := Case{Name: "bypass/t/tiocsti", Raw: crafted.Request{ID: "tiocsti", Via: crafted.ViaTIOCSTI}}
	x := bin([]Case{tio}, []crafted.Result{{ID: "tiocsti", Via: crafted.ViaTIOCSTI, Reply: -1, Connected: true, Body: "pushed into fd 0"}})
	x.Unsandboxed = map[string]crafted.Result{"tiocsti": {ID: "tiocsti", Connected: true}}
	if got := Classify(x).Cases[tio.Name]; got.Outcome != model.Correct || !strings.Contains(got.Hint, "contained") {
		t.Errorf("input into a terminal of the sandbox's own: %s (%s)", got.Outcome, got.Hint)
	}
	x.Injected = "xx" + crafted.Payload(bn, "tiocsti")
	if got := Classify(x).Cases[tio.Name]; got.Outcome != model.NonEnforcing || got.Reached != "terminal" {
		t.Errorf("input in the caller's terminal: %s (%s)", got.Outcome, got.Hint)
	}
}

// A resolver query for the allowed host's name is no request to the allowed host: a case aimed
// at the allowed host that must not get through (a POST under reading methods only) is not
// breached by its proxy resolving the name first (Codex asks for its AAAA), only by the host's
// own log or its token.
func TestClassifyResolvingTheAllowedNameIsNoBreach(t *testing.T) {
	post := Case{Name: "bypass/m/post", Raw: crafted.Request{ID: "post", Via: crafted.ViaHTTP, Host: "allowed.sandcheck.test", Port: 80, Method: "POST"}}
	in := bin([]Case{post, ctl(crafted.ViaHTTP)},
		[]crafted.Result{refused("post", crafted.ViaHTTP), reached("control-http", crafted.ViaHTTP, "tokA")},
		logged(model.RoleAllowed, "control-http"),
		model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: "allowed.sandcheck.test", Detail: "AAAA", From: "198.18.0.1:53000"})
	if got := Classify(in).Cases["bypass/m/post"]; got.Outcome != model.Correct {
		t.Errorf("post: %s (%s), want correct", got.Outcome, got.Hint)
	}
	// The allowed host's own log of the case's request is a breach.
	in.Hits = append(in.Hits, logged(model.RoleAllowed, "post"))
	if got := Classify(in).Cases["bypass/m/post"]; got.Outcome != model.NonEnforcing {
		t.Errorf("post logged by the allowed host: %s (%s), want non-enforcing", got.Outcome, got.Hint)
	}
}

// TestClassifyBridgeSwap: the bridge class's request goes to the allowed host through the proxy
// after the command swapped the proxy's bridge sockets. A relay that followed the swap carried
// it to the host socket: that socket's log of the request line is egress, the case's; a request
// that reached the allowed host, or failed, did not leave.
func TestClassifyBridgeSwap(t *testing.T) {
	swap := Case{Name: "bypass/bridge/socket-swap", AllowedOK: true,
		Raw: crafted.Request{ID: "bridge.socket-swap", Via: crafted.ViaHTTP, Host: "allowed.sandcheck.test", Port: 80, Tamper: crafted.TamperBridge}}
	okCtl := []crafted.Result{reached("control-http", crafted.ViaHTTP, "tokA")}
	okHit := logged(model.RoleAllowed, "control-http")
	line := "GET http://allowed.sandcheck.test:80" + crafted.BypassPath(bn, "bridge.socket-swap") + " HTTP/1.1"
	unix := []model.Hit{
		{Role: model.RoleUnix, Proto: model.ProtoUnix, Host: "/t/run/sandcheck-host.sock", From: "unix#1", Detail: "accepted"},
		{Role: model.RoleUnix, Proto: model.ProtoUnix, Host: "/t/run/sandcheck-host.sock", From: "unix#1", Detail: "line", Path: line},
	}
	for _, c := range []struct {
		name string
		in   Input
		want model.Outcome
		hint string
	}{
		{"the relay carried the request to the host socket",
			bin([]Case{ctl(crafted.ViaHTTP), swap}, append(okCtl, crafted.Result{ID: "bridge.socket-swap", Via: crafted.ViaHTTP, Reply: -1, Stage: "response", Err: "EOF"}),
				append([]model.Hit{okHit}, unix...)...),
			model.NonEnforcing, "unix reached"},
		{"the request reached the allowed host: the relay kept its own socket",
			bin([]Case{ctl(crafted.ViaHTTP), swap}, append(okCtl, reached("bridge.socket-swap", crafted.ViaHTTP, "tokA")), okHit, logged(model.RoleAllowed, "bridge.socket-swap")),
			model.Correct, ""},
	} {
		got := Classify(c.in).Cases[swap.Name]
		if got.Outcome != c.want || !strings.Contains(got.Hint, c.hint) {
			t.Errorf("%s: %s (%s), want %s with %q", c.name, got.Outcome, got.Hint, c.want, c.hint)
		}
	}
}

// TestThroughParent: under a parent proxy, a request that reached the allowed host passes only
// where the parent logged it too; around it, it is non-enforcing. The parent's own log of a
// refused request is no egress, and a denied request it forwarded is judged where it arrived.
func TestThroughParent(t *testing.T) {
	through := Case{Name: "bypass/parent-proxy/through-connect", Raw: crafted.Request{ID: "through", Via: crafted.ViaConnect, Host: "allowed.sandcheck.test", Port: 80},
		AllowedOK: true, ThroughParent: true}
	denied := bcase("bypass/parent-proxy/denied-trailing-dot", "dot", crafted.ViaConnect)
	okCtl := []crafted.Result{reached("control-connect", crafted.ViaConnect, "tokA")}
	okHit := logged(model.RoleAllowed, "control-connect")
	parent := func(id string) model.Hit {
		return model.Hit{Role: model.RoleParent, Proto: model.ProtoHTTP, Path: crafted.BypassPath(bn, id), From: "127.0.0.1:9"}
	}
	for _, c := range []struct {
		name string
		hits []model.Hit
		want model.Outcome
	}{
		{"through the parent", []model.Hit{okHit, parent("through"), logged(model.RoleAllowed, "through")}, model.Correct},
		{"around the parent", []model.Hit{okHit, logged(model.RoleAllowed, "through")}, model.NonEnforcing},
	} {
		in := bin([]Case{ctl(crafted.ViaConnect), through}, append(okCtl, reached("through", crafted.ViaConnect, "tokA")), c.hits...)
		if got := Classify(in).Cases[through.Name]; got.Outcome != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Outcome, got.Hint, c.want)
		}
	}
	in := bin([]Case{ctl(crafted.ViaConnect), denied}, append(okCtl, refused("dot", crafted.ViaConnect)), okHit, parent("dot"))
	if got := Classify(in).Cases[denied.Name]; got.Outcome != model.Correct {
		t.Errorf("a refused request the parent logged: %s (%s), want correct", got.Outcome, got.Hint)
	}
	in = bin([]Case{ctl(crafted.ViaConnect), denied}, append(okCtl, reached("dot", crafted.ViaConnect, "tokD")), okHit, parent("dot"), logged(model.RoleDenied, "dot"))
	if got := Classify(in).Cases[denied.Name]; got.Outcome != model.NonEnforcing {
		t.Errorf("a denied request the parent forwarded: %s (%s), want non-enforcing", got.Outcome, got.Hint)
	}
}
