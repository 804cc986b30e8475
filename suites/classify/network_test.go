package classify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// attempt finds the probe's report of one request.
func attempt(in *Network, ch, role string) *probe.Attempt {
	for i, a := range in.Obs.Attempts {
		if a.Channel == ch && a.Role == role {
			return &in.Obs.Attempts[i]
		}
	}
	panic("no attempt " + ch + "/" + role)
}

// dropRequest removes a request from the servers' log, with the connection that carried it.
func dropRequest(in *Network, role, path string) {
	from := map[string]bool{}
	for _, h := range in.Hits {
		if h.Role == role && h.Path == path {
			from[h.From] = true
		}
	}
	var keep []model.Hit
	for _, h := range in.Hits {
		if !(h.Role == role && from[h.From]) {
			keep = append(keep, h)
		}
	}
	if len(keep) == len(in.Hits) {
		panic("no request " + role + " " + path + " in the log")
	}
	in.Hits = keep
}

// recording is the part of a real trial's evidence (suites/harness/network.Trial) that
// classification reads. The files in testdata/ were recorded from real srt 0.0.83 runs on this
// machine, one per fault, by suites/harness/network's TestRecordClassifyTestdata
// (SANDCHECK_RECORD=1).
type recording struct {
	Allowed struct{ Token string } `json:"allowed"`
	Denied  struct{ Token string } `json:"denied"`
	Run     struct {
		Exit     int    `json:"exit"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timed_out"`
	} `json:"run"`
	Ran   bool               `json:"sandbox_ran"`
	Obs   *probe.Observation `json:"observation"`
	Nonce string             `json:"nonce"`
	Hits  []model.Hit        `json:"fixture_hits"`
}

var srtReach = []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}

func load(t *testing.T, name string) Network {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Network{Session: Session{Ran: r.Ran, Obs: r.Obs, Exit: r.Run.Exit, Stderr: r.Run.Stderr, TimedOut: r.Run.TimedOut},
		Tokens: map[string]string{"allowed": r.Allowed.Token, "denied": r.Denied.Token}, Reach: srtReach,
		Nonce: r.Nonce, Hits: r.Hits}
}

func TestRecordedTrials(t *testing.T) {
	cases := []struct {
		file     string
		want     model.Outcome
		hint     string                   // must appear in the overall hint
		channels map[string]model.Outcome // per-channel outcomes to check
	}{
		{"none", model.Correct, "denied refused on every channel",
			map[string]model.Outcome{"http": model.Correct, "https": model.Correct, "socks": model.Correct, "direct": model.Correct, "dns": model.Correct}},
		{"bridge-absent", model.ProxyDead, "not listening on 127.0.0.1:1080,3128",
			map[string]model.Outcome{"http": model.ProxyDead, "socks": model.ProxyDead, "direct": model.Correct}},
		{"bridge-late", model.ProxyDead, "not listening", map[string]model.Outcome{"https": model.ProxyDead}},
		{"bridge-mid", model.ProxyDead, "proxy came up late", map[string]model.Outcome{"http": model.ProxyDead, "https": model.Correct}},
		{"host-bridge-dies", model.ProxyDead, "host-side bridge died mid-session",
			map[string]model.Outcome{"http": model.ProxyDead, "https": model.ProxyDead, "socks": model.ProxyDead}},
		{"netns-shared", model.NonEnforcing, "direct: denied host reached",
			map[string]model.Outcome{"direct": model.NonEnforcing, "dns": model.NonEnforcing, "http": model.Correct}},
		{"open-proxy", model.NonEnforcing, "http: denied host reached",
			map[string]model.Outcome{"http": model.NonEnforcing, "https": model.NonEnforcing, "socks": model.NonEnforcing, "direct": model.Correct}},
		{"policy-allows-denied", model.NonEnforcing, "denied host reached", map[string]model.Outcome{"http": model.NonEnforcing}},
		// No fault: srt 0.0.83 on a starved wsl2-like guest (QEMU TCG, load 6 on 2 cores), whose
		// first request through the relay got no reply in 12 s while the denied one got srt's 403.
		{"wsl2-like-slow-relay", model.ProxyDead, "proxy answered late",
			map[string]model.Outcome{"http": model.ProxyDead, "https": model.Correct}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			r := ClassifyNetwork(load(t, c.file))
			if r.Outcome != c.want {
				t.Fatalf("outcome = %s (%s), want %s", r.Outcome, r.Hint, c.want)
			}
			if !strings.Contains(r.Hint, c.hint) {
				t.Errorf("hint %q lacks %q", r.Hint, c.hint)
			}
			for ch, want := range c.channels {
				if got := r.Channels[ch].Outcome; got != want {
					t.Errorf("channel %s = %s (%s), want %s", ch, got, r.Channels[ch].Hint, want)
				}
			}
		})
	}
}

// Variations on the healthy recording pin the rules that no fault recording exercises.
func TestDerivedCases(t *testing.T) {
	mutate := func(f func(in *Network)) Network {
		in := load(t, "none")
		f(&in)
		return in
	}
	cases := []struct {
		name string
		in   Network
		want model.Outcome
		hint string
	}{
		{"timeout", mutate(func(in *Network) { in.TimedOut = true }), model.Timeout, "deadline"},
		{"no marker, loud exit", mutate(func(in *Network) {
			in.Ran, in.Obs, in.Exit, in.Stderr = false, nil, 1, "Error: bwrap: No permissions to create new namespace"
		}), model.SandboxFailed, "No permissions"},
		{"no marker, silent", mutate(func(in *Network) { in.Ran, in.Obs, in.Exit, in.Stderr = false, nil, 0, "" }), model.HarnessError, "marker missing"},
		{"marker but no observation", mutate(func(in *Network) { in.Obs = nil }), model.HarnessError, "never reported"},
		{"curl missing", mutate(func(in *Network) { in.Obs.Problems = []string{"curl not runnable"} }), model.HarnessError, "curl"},
		{"allowed refused by policy", mutate(func(in *Network) {
			*attempt(in, "http", "allowed") = probe.Attempt{Channel: "http", Role: "allowed", Status: 403, ProxyError: "blocked-by-allowlist",
				Body: "Connection blocked by network allowlist\n"}
			dropRequest(in, "allowed", "/http/"+in.Nonce) // refused: the allowed host never saw it
		}), model.AllowedBlocked, "allowed host refused by policy"},
		{"denied host saw a request but no token came back", mutate(func(in *Network) {
			in.Hits = append(in.Hits, model.Hit{Role: "denied", Proto: "http", Path: "/http/" + in.Nonce, Host: "denied.sandcheck.test", Port: 80, Detail: "GET"})
		}), model.NonEnforcing, "http: denied host received denied.sandcheck.test:80 http GET /http/"},
		{"wrong token for the addressed host", mutate(func(in *Network) {
			in.Tokens["allowed"], in.Tokens["denied"] = in.Tokens["denied"], in.Tokens["allowed"]
		}), model.NonEnforcing, "denied host reached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ClassifyNetwork(c.in)
			if r.Outcome != c.want || !strings.Contains(r.Hint, c.hint) {
				t.Fatalf("got %s (%s), want %s with %q", r.Outcome, r.Hint, c.want, c.hint)
			}
		})
	}
}

func TestVerdictOfCurlSignatures(t *testing.T) {
	cases := []struct {
		a    probe.Attempt
		want Verdict
	}{
		{probe.Attempt{Channel: "http", Exit: 7, Err: "curl: (7) Failed to connect to localhost port 3128 after 0 ms: Couldn't connect to server"}, ProxyRefused},
		{probe.Attempt{Channel: "http", Exit: 52, Err: "curl: (52) Empty reply from server"}, ProxyEmpty},
		{probe.Attempt{Channel: "https", Exit: 56, Err: "curl: (56) CONNECT tunnel failed, response 403", Status: 403}, PolicyBlocked},
		{probe.Attempt{Channel: "socks", Exit: 97, Err: "curl: (97) Can't complete SOCKS5 connection to denied.sandcheck.test. (2)"}, PolicyBlocked},
		{probe.Attempt{Channel: "socks", Exit: 97, Err: "curl: (97) connection to proxy closed"}, ProxyEmpty},
		{probe.Attempt{Channel: "http", Status: 502}, ProxyError},
		// A proxy that wants credentials the client lacks answered: not dead, not a policy
		// refusal (srt's proxy with another session's credentials, in a shared network).
		{probe.Attempt{Channel: "http", Status: 407}, ProxyError},
		{probe.Attempt{Channel: "https", Exit: 56, Err: "curl: (56) CONNECT tunnel failed, response 407", Status: 407}, ProxyError},
		{probe.Attempt{Channel: "https", Exit: 56, Err: "curl: (56) CONNECT tunnel failed, response 407"}, ProxyError},
		{probe.Attempt{Channel: "socks", Exit: 97, Err: "curl: (97) No authentication method was acceptable."}, ProxyError},
		{probe.Attempt{Channel: "socks", Exit: 97, Err: "curl: (97) User was rejected by the SOCKS5 server (1 1)."}, ProxyError},
		{probe.Attempt{Channel: "direct", Exit: 1, Errno: "ENETUNREACH"}, NoRoute},
		{probe.Attempt{Channel: "dns", Exit: 1, Err: "network is unreachable"}, NoRoute},
		{probe.Attempt{Channel: "dns", Resolved: []string{"198.18.0.3"}}, Reached},
		{probe.Attempt{Channel: "socks", Skipped: "no socks proxy"}, Skipped},
		{probe.Attempt{Channel: "http", Body: "sandcheck-fixture role=denied token=T2\n", Status: 200}, Reached},
	}
	for _, c := range cases {
		if got, _ := VerdictOf(c.a, map[string]string{"allowed": "T1", "denied": "T2"}); got != c.want {
			t.Errorf("%+v: got %s, want %s", c.a, got, c.want)
		}
	}
}

func TestWorstPrefersSecurity(t *testing.T) {
	if w := model.Worst(model.Correct, model.ProxyDead, model.NonEnforcing, model.HarnessError); w != model.NonEnforcing {
		t.Fatalf("Worst = %s", w)
	}
	if w := model.Worst(); w != model.NotApplicable {
		t.Fatalf("Worst() = %s", w)
	}
	for _, o := range model.All {
		if !o.Valid() {
			t.Fatalf("%s not valid", o)
		}
	}
}
