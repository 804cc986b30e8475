package classify

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// blockedEverywhere is what a deny-all sandbox shows: no route anywhere, curl's connection to a
// proxy the inherited environment names refused, no SOCKS proxy at all.
func blockedEverywhere() Network {
	var att []probe.Attempt
	for _, role := range []string{"allowed", "denied"} {
		att = append(att,
			probe.Attempt{Channel: model.ChanHTTP, Role: role, Exit: 7, Err: "Failed to connect to allowed.sandcheck.test port 80: Network is unreachable"},
			probe.Attempt{Channel: model.ChanHTTPS, Role: role, Exit: 7, Err: "Failed to connect: Network is unreachable"},
			probe.Attempt{Channel: model.ChanSOCKS, Role: role, Skipped: "no socks proxy in the environment (ALL_PROXY/FTP_PROXY)"},
			probe.Attempt{Channel: model.ChanDirect, Role: role, Errno: "ENETUNREACH", Err: "connect: network is unreachable"},
			probe.Attempt{Channel: model.ChanDNS, Role: role, Err: "i/o timeout"},
		)
	}
	return Network{Session: Session{Ran: true, Obs: &probe.Observation{Attempts: att}}, Tokens: map[string]string{"allowed": "tokA", "denied": "tokD"}}
}

// TestDenyAll: with an empty Reach, every channel blocked is correct, and any token back (the
// allowed host's too) is non-enforcing. A recording of srt, which lets the allowed host through
// its proxy, is non-enforcing when judged as a deny-all sandbox.
func TestDenyAll(t *testing.T) {
	r := ClassifyNetwork(blockedEverywhere())
	if r.Outcome != model.Correct || !strings.Contains(r.Hint, "deny-all") {
		t.Fatalf("blocked everywhere: %s (%s), want correct", r.Outcome, r.Hint)
	}
	if c := r.Channels[model.ChanSOCKS]; c.Outcome != model.NotApplicable {
		t.Errorf("socks skipped: %s, want not-applicable", c.Outcome)
	}
	noName := blockedEverywhere()
	noName.Obs.Attempts[0] = probe.Attempt{Channel: model.ChanHTTP, Role: "allowed", Exit: 6, Err: "curl: (6) Could not resolve host: allowed.sandcheck.test"}
	if r := ClassifyNetwork(noName); r.Outcome != model.Correct {
		t.Errorf("name not resolvable: %s (%s), want correct", r.Outcome, r.Hint)
	}
	leak := blockedEverywhere()
	leak.Obs.Attempts[3] = probe.Attempt{Channel: model.ChanDirect, Role: "allowed", Status: 200, Body: "tokA"}
	if r := ClassifyNetwork(leak); r.Outcome != model.NonEnforcing || !strings.Contains(r.Hint, "allowed host reached") {
		t.Errorf("allowed reached directly: %s (%s), want non-enforcing", r.Outcome, r.Hint)
	}
	for _, f := range []string{"none", "netns-shared"} {
		in := load(t, f)
		in.Reach = nil
		if r := ClassifyNetwork(in); r.Outcome != model.NonEnforcing {
			t.Errorf("%s as deny-all: %s (%s), want non-enforcing", f, r.Outcome, r.Hint)
		}
	}
}
