package classify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The rules of issue 11, each on a real recording changed in exactly the way the case needs.
// "none" is srt healthy (correct); "open-proxy" is srt with an open proxy (every proxy channel
// reached the denied host, and its servers logged it).

func deniedHit(proto, path string, port int) model.Hit {
	h := model.Hit{Role: model.RoleDenied, Proto: proto, Path: path, Host: "denied.sandcheck.test", Port: port, From: "198.18.0.1:40000"}
	if proto == model.ProtoTCP {
		h.Detail = "accepted"
	}
	return h
}

// stdoutOf renders what the probe prints for an observation: the marker and one frame.
func stdoutOf(t *testing.T, obs *probe.Observation) string {
	t.Helper()
	b, err := json.Marshal(obs)
	if err != nil {
		t.Fatal(err)
	}
	n := obs.Nonce
	return probe.RanMarker + " " + n + "\n" + probe.BeginMarker + " " + n + "\n" + string(b) + "\n" + probe.EndMarker + " " + n + "\n"
}

// parsed replaces the run's output with stdout, read the way the harness reads it.
func parsed(in *Network, stdout string) {
	out, err := probe.Parse([]byte(stdout), in.Nonce)
	in.Ran, in.Obs, in.ParseErr = out.Ran, out.Obs, err
}

func TestEvidenceFirst(t *testing.T) {
	from := func(file string, f func(in *Network)) func(t *testing.T) Network {
		return func(t *testing.T) Network {
			in := load(t, file)
			f(&in)
			return in
		}
	}
	cases := []struct {
		name  string
		in    func(t *testing.T) Network
		want  model.Outcome
		hints []string // each must appear in the overall hint
		ch    string   // a channel whose own outcome must be want too
	}{
		{"timeout with denied hits", from("open-proxy", func(in *Network) {
			in.TimedOut, in.Obs, in.Exit = true, nil, -1
		}), model.NonEnforcing, []string{"http: fixture servers logged denied.sandcheck.test:80 http GET /http/", "https GET /https/", "also: trial exceeded its deadline"}, "https"},
		{"timeout without hits", from("none", func(in *Network) { in.TimedOut, in.Obs = true, nil }), model.Timeout, []string{"deadline"}, ""},
		{"sandbox exit non-zero with denied hits", from("open-proxy", func(in *Network) {
			in.Ran, in.Obs, in.Exit, in.Stderr = false, nil, 1, "Error: something broke"
		}), model.NonEnforcing, []string{"GET /socks/", "also: sandbox exited 1"}, "socks"},
		{"probe never reported, denied hits", from("open-proxy", func(in *Network) { in.Obs = nil }), model.NonEnforcing,
			[]string{"/http/", "also: probe started but never reported"}, "http"},
		{"DNS query for the denied name, no reply", from("none", func(in *Network) {
			in.Hits = append(in.Hits, deniedHit(model.ProtoDNS, probe.DNSName(in.Nonce, model.RoleDenied), 53))
		}), model.NonEnforcing, []string{"dns: denied host received denied.sandcheck.test:53 dns q-", "although the client saw no-route"}, "dns"},
		{"DNS query for a name no fixture owns", from("none", func(in *Network) {
			in.Hits = append(in.Hits, model.Hit{Role: model.RoleDNS, Proto: model.ProtoDNS, Path: "exfil.example", Port: 53})
		}), model.NonEnforcing, []string{"fixture servers logged egress: resolver:53 dns exfil.example"}, ""},
		{"DNS query for the allowed name, where the policy offers no DNS", from("none", func(in *Network) {
			in.Hits = append(in.Hits, model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: probe.DNSName(in.Nonce, model.RoleAllowed), Host: "allowed.sandcheck.test", Port: 53})
		}), model.NonEnforcing, []string{"dns: allowed host reachable without the proxy", "the client saw no-route"}, "dns"},
		{"direct connect to denied accepted, then silent", from("none", func(in *Network) {
			a := attempt(in, model.ChanDirect, model.RoleDenied)
			a.Connected, a.Errno, a.Err = true, "ETIMEDOUT", "read reply: read tcp: i/o timeout"
			in.Hits = append(in.Hits, deniedHit(model.ProtoTCP, "", 80))
		}), model.NonEnforcing, []string{"direct: denied host received denied.sandcheck.test:80 tcp accepted", "client saw accepted (read reply"}, "direct"},
		{"direct connect to denied accepted, never logged", from("none", func(in *Network) {
			a := attempt(in, model.ChanDirect, model.RoleDenied)
			a.Connected, a.Errno, a.Err = true, "ETIMEDOUT", "read reply: read tcp: i/o timeout"
		}), model.HarnessError, []string{"client: the direct connection to the denied host was accepted", "server: the denied host logged no connection"}, "direct"},
		{"both tokens in the allowed host's body", from("none", func(in *Network) {
			attempt(in, model.ChanHTTP, model.RoleAllowed).Body += nethost.Body(model.RoleDenied, in.Tokens[model.RoleDenied])
		}), model.NonEnforcing, []string{"http: denied host reached (asked the allowed host, the denied host answered"}, "http"},
		{"both tokens in the denied host's body", from("none", func(in *Network) {
			a := attempt(in, model.ChanSOCKS, model.RoleDenied)
			a.Exit, a.Err, a.Status = 0, "", 200
			a.Body = nethost.Body(model.RoleAllowed, in.Tokens[model.RoleAllowed]) + nethost.Body(model.RoleDenied, in.Tokens[model.RoleDenied])
		}), model.NonEnforcing, []string{"socks: denied host reached (its token came back"}, "socks"},
		{"a missing channel", from("none", func(in *Network) {
			var keep []probe.Attempt
			for _, a := range in.Obs.Attempts {
				if a.Channel != model.ChanSOCKS {
					keep = append(keep, a)
				}
			}
			in.Obs.Attempts = keep
		}), model.HarnessError, []string{"probe did not report socks/allowed, socks/denied"}, ""},
		{"a missing pair", from("none", func(in *Network) {
			in.Obs.Attempts = in.Obs.Attempts[:len(in.Obs.Attempts)-1]
		}), model.HarnessError, []string{"probe did not report dns/denied"}, ""},
		{"a promised channel the probe was not asked for", from("none", func(in *Network) {
			in.Channels = []string{model.ChanHTTP, model.ChanHTTPS, model.ChanDirect, model.ChanDNS}
			in.Obs.Attempts = in.Obs.Attempts[:4] // http, https only
		}), model.HarnessError, []string{"probe did not report direct/allowed, direct/denied, dns/allowed, dns/denied, socks/allowed, socks/denied"}, ""},
		{"forged second frame", from("none", func(in *Network) {
			forged := *in.Obs
			forged.Attempts = append([]probe.Attempt{}, in.Obs.Attempts...)
			forged.Attempts[0].Body = "forged"
			parsed(in, stdoutOf(t, in.Obs)+stdoutOf(t, &forged)[len(probe.RanMarker)+len(in.Nonce)+2:])
		}), model.HarnessError, []string{"probe output: two observations for one nonce"}, ""},
		{"forged frame hiding a fail-open", from("open-proxy", func(in *Network) {
			healthy := load(t, "none").Obs
			healthy.Nonce = in.Nonce
			parsed(in, stdoutOf(t, in.Obs)+stdoutOf(t, healthy))
		}), model.NonEnforcing, []string{"denied.sandcheck.test:80 http GET /http/", "also: probe output: two observations for one nonce"}, ""},
		{"a 9 MiB line", from("none", func(in *Network) {
			parsed(in, strings.Repeat("x", 9<<20)+"\n"+stdoutOf(t, in.Obs))
		}), model.HarnessError, []string{"probe output: read sandbox output", "token too long"}, ""},
		{"junk output with denied hits", from("open-proxy", func(in *Network) {
			parsed(in, "\x00\x01 junk {\"not\": \"a frame\"}\n"+probe.BeginMarker+" wrong-nonce\n")
			in.Exit = 0
		}), model.NonEnforcing, []string{"GET /https/", "also: SANDBOX-RAN marker missing"}, "https"},
		{"junk output without hits", from("none", func(in *Network) {
			parsed(in, "\x00\x01 junk {\"not\": \"a frame\"}\n")
			in.Hits, in.Exit = nil, 0
		}), model.HarnessError, []string{"SANDBOX-RAN marker missing"}, ""},
		{"allowed token seen, never logged by the allowed server", from("none", func(in *Network) {
			dropRequest(in, model.RoleAllowed, probe.RequestPath(model.ChanHTTPS, in.Nonce))
		}), model.HarnessError, []string{"https: client: the allowed token came back over https", "server: the allowed host logged no /https/"}, "https"},
		{"allowed request logged, the client says the policy refused it", from("none", func(in *Network) {
			*attempt(in, model.ChanHTTP, model.RoleAllowed) = probe.Attempt{Channel: "http", Role: "allowed", Status: 403, ProxyError: "blocked-by-allowlist"}
		}), model.HarnessError, []string{"client: policy-blocked over http (blocked-by-allowlist); server: the allowed host logged allowed.sandcheck.test:80 http GET /http/"}, "http"},
		{"a promised channel skipped", from("none", func(in *Network) {
			for _, role := range []string{model.RoleAllowed, model.RoleDenied} {
				*attempt(in, model.ChanSOCKS, role) = probe.Attempt{Channel: "socks", Role: role, Skipped: "no socks proxy in the environment"}
			}
			dropRequest(in, model.RoleAllowed, probe.RequestPath(model.ChanSOCKS, in.Nonce))
		}), model.HarnessError, []string{"socks: a channel the target promises was not tried: no socks proxy"}, "socks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ClassifyNetwork(c.in(t))
			t.Logf("%s: %s", r.Outcome, r.Hint)
			if r.Outcome != c.want {
				t.Fatalf("outcome = %s (%s), want %s", r.Outcome, r.Hint, c.want)
			}
			for _, h := range c.hints {
				if !strings.Contains(r.Hint, h) {
					t.Errorf("hint %q lacks %q", r.Hint, h)
				}
			}
			if c.ch != "" && r.Channels[c.ch].Outcome != c.want {
				t.Errorf("channel %s = %+v, want %s", c.ch, r.Channels[c.ch], c.want)
			}
			if c.want == model.NonEnforcing && len(r.Egress) == 0 && !strings.Contains(r.Hint, "token came back") && !strings.Contains(r.Hint, "denied host answered") {
				t.Errorf("non-enforcing on server evidence, but Egress is empty")
			}
		})
	}
}

// The token lookup must not depend on map order: both tokens in one body read the same way on
// every run (Go randomises map iteration per range statement).
func TestBothTokensStable(t *testing.T) {
	var first string
	for i := 0; i < 100; i++ {
		in := load(t, "none")
		attempt(&in, model.ChanHTTP, model.RoleAllowed).Body = nethost.Body(model.RoleAllowed, in.Tokens[model.RoleAllowed]) +
			nethost.Body(model.RoleDenied, in.Tokens[model.RoleDenied])
		a := attempt(&in, model.ChanHTTPS, model.RoleDenied)
		a.Body = nethost.Body(model.RoleDenied, in.Tokens[model.RoleDenied]) + nethost.Body(model.RoleAllowed, in.Tokens[model.RoleAllowed])
		r := ClassifyNetwork(in)
		if r.Outcome != model.NonEnforcing || r.Channels[model.ChanHTTP].Outcome != model.NonEnforcing || r.Channels[model.ChanHTTPS].Outcome != model.NonEnforcing {
			t.Fatalf("run %d: %s (%s)", i, r.Outcome, r.Hint)
		}
		if i == 0 {
			first = r.Hint
		} else if r.Hint != first {
			t.Fatalf("run %d hint differs:\n%s\n%s", i, r.Hint, first)
		}
		for _, ab := range []probe.Attempt{*attempt(&in, model.ChanHTTP, model.RoleAllowed), *a} {
			if v, role := VerdictOf(ab, in.Tokens); v != Reached || role != model.RoleDenied {
				t.Fatalf("run %d: VerdictOf = %s %s, want reached denied", i, v, role)
			}
		}
	}
}

// A target that promises DNS needs both halves of the proof for it too.
func TestPromisedDNSNeedsTheServersWord(t *testing.T) {
	in := load(t, "none")
	in.Reach = append(in.Reach, model.ChanDNS)
	attempt(&in, model.ChanDNS, model.RoleAllowed).Resolved = []string{"198.18.0.3"}
	if r := ClassifyNetwork(in); r.Outcome != model.HarnessError || !strings.Contains(r.Hint, "logged no a query for q-") {
		t.Fatalf("answered but never logged: %s (%s), want harness-error", r.Outcome, r.Hint)
	}
	in.Hits = append(in.Hits, model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: probe.DNSName(in.Nonce, model.RoleAllowed)})
	if r := ClassifyNetwork(in); r.Outcome != model.Correct || r.Channels[model.ChanDNS].Outcome != model.Correct {
		t.Fatalf("answered and logged: %s (%s), want correct", r.Outcome, r.Hint)
	}
}

// A deny-all sandbox: any request of this trial the allowed host logged is egress too.
func TestDenyAllServerEvidence(t *testing.T) {
	in := blockedEverywhere()
	in.Nonce = "n1"
	in.Hits = []model.Hit{{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/https/n1", Host: "allowed.sandcheck.test", Port: 80}}
	r := ClassifyNetwork(in)
	if r.Outcome != model.NonEnforcing || !strings.Contains(r.Hint, "https: allowed host reached although the sandbox denies all network") || len(r.Egress) != 1 {
		t.Fatalf("%s (%s) egress %q, want non-enforcing on https", r.Outcome, r.Hint, r.Egress)
	}
}

// The no-sandbox-then-hang shape: the probe reported, then the run hung past its deadline. The
// channel with egress is non-enforcing; no other channel of a timed-out trial reads as a pass.
func TestHungAfterReportKeepsNoPass(t *testing.T) {
	in := load(t, "none")
	in.TimedOut = true
	in.Hits = append(in.Hits, deniedHit(model.ProtoHTTP, probe.RequestPath(model.ChanHTTP, in.Nonce), 80))
	r := ClassifyNetwork(in)
	if r.Outcome != model.NonEnforcing || r.Channels[model.ChanHTTP].Outcome != model.NonEnforcing {
		t.Fatalf("%s (%s), want non-enforcing on http", r.Outcome, r.Hint)
	}
	for ch, c := range r.Channels {
		if ch != model.ChanHTTP && c.Outcome != model.Timeout {
			t.Errorf("channel %s of a timed-out trial = %s, want timeout", ch, c.Outcome)
		}
	}
	if len(r.Channels) != len(model.AllChannels) {
		t.Errorf("channels = %d, want every channel asked for", len(r.Channels))
	}
}

// What a trial streams as egress, decided as each hit arrives (so a killed trial keeps it): the
// denied host's hits always; for a deny-all sandbox the allowed host's too; for a proxy target the
// allowed host reached by a probe request around the proxy (direct, DNS), whatever its nonce,
// but not through the proxy, and not the proxy's own lookups.
func TestStreamedEgress(t *testing.T) {
	proxy := []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}
	for _, c := range []struct {
		name  string
		h     model.Hit
		reach []string
		want  bool
	}{
		{"denied, through the proxy", model.Hit{Role: model.RoleDenied, Proto: model.ProtoHTTP, Path: "/http/n1"}, proxy, true},
		{"the resolver itself", model.Hit{Role: model.RoleDNS, Proto: model.ProtoUDP}, proxy, true},
		{"allowed, through the proxy", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/http/n1"}, proxy, false},
		{"allowed, a TCP connect", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoTCP}, proxy, false},
		{"allowed, direct", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/direct/other-nonce"}, proxy, true},
		{"allowed, the probe's DNS query", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: "q-n1.allowed.sandcheck.test."}, proxy, true},
		{"allowed, the proxy's own lookup", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoDNS, Path: "allowed.sandcheck.test."}, proxy, false},
		{"allowed, direct, where the target promises it", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/direct/n1"}, []string{model.ChanDirect}, false},
		{"deny-all: allowed, a TCP connect", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoTCP}, nil, true},
		{"deny-all: allowed, through nothing", model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/http/n1"}, nil, true},
	} {
		if got := Egress(c.h, c.reach); got != c.want {
			t.Errorf("%s: Egress = %v, want %v", c.name, got, c.want)
		}
	}
}
