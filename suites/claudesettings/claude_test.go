package claudesettings

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// The seed's two curls, read as its Observed section reads them: the fixture servers' log first.
func TestSeedOutcome(t *testing.T) {
	denied := []model.Hit{{Role: model.RoleDenied, Proto: "tcp", Host: "denied.sandcheck.test", Port: 443, Detail: "accepted"},
		{Role: model.RoleDenied, Proto: "https", Host: "denied.sandcheck.test", Port: 443, Detail: "GET", Path: "/"}}
	allowed := []model.Hit{{Role: model.RoleAllowed, Proto: "https", Host: "allowed.sandcheck.test", Port: 443, Detail: "GET", Path: "/"}}
	dead := "curl: (7) Failed to connect to localhost port 3128 after 0 ms: Couldn't connect to server\nORG=000\n" +
		"curl: (7) Failed to connect to localhost port 3128 after 0 ms: Couldn't connect to server\nEX=000\nWEB_BLOCKED\n"
	cases := []struct {
		name, out string
		exit      int
		hits      []model.Hit
		want      model.Outcome
		hint      string
	}{
		{"outcome 2", "ORG=200\nEX=200\nWEB_OK\n", 0, append(append([]model.Hit{}, allowed...), denied...), model.NonEnforcing,
			"outcome 2, proxy up but not enforcing: ORG=200, EX=200 WEB_OK: the denied host egressed (its server logged https GET / on denied.sandcheck.test:443)"},
		// The servers' log outweighs what the curls printed.
		{"egress behind a failing curl", "ORG=200\nEX=000\nWEB_BLOCKED\n", 0, denied, model.NonEnforcing, "outcome 2"},
		{"outcome 1", dead, 0, nil, model.ProxyDead, "outcome 1, proxy dead: ORG=000, EX=000 WEB_BLOCKED"},
		{"outcome 3", "ORG=200\nEX=403\nWEB_BLOCKED\n", 0, allowed, model.Correct, "outcome 3, correct"},
		{"allowed refused", "ORG=403\nEX=403\nWEB_BLOCKED\n", 0, nil, model.AllowedBlocked, "the allowed host was not reached"},
		{"claude refused", "", 1, nil, model.SandboxFailed, "neither curl ran: Claude Code exited 1: sandbox required but unavailable"},
		{"nothing", "", 0, nil, model.HarnessError, "neither curl reported"},
		// A 200 the denied server never logged is not the denied host answering.
		{"unexplained ok", "ORG=200\nEX=200\nWEB_OK\n", 0, allowed, model.HarnessError, "logged nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, hint := seedOutcome(c.out, c.exit, "sandbox required but unavailable: refusing to start", c.hits)
			if o != c.want || !strings.Contains(hint, c.hint) {
				t.Fatalf("%s: %s (%s), want %s with %q", c.name, o, hint, c.want, c.hint)
			}
		})
	}
}

// How a configuration's verdict is judged and named.
func TestJudgeClaude(t *testing.T) {
	correct := classify.Result{Outcome: model.Correct, Hint: "allowed reachable"}
	refused := classify.Result{Outcome: model.SandboxFailed, Hint: "sandbox exited 1 before the command ran: x"}
	direct := classify.Result{Outcome: model.NonEnforcing, Channels: map[string]classify.ChannelResult{
		"direct": {Denied: classify.Reached, Hint: "denied host reached"}, "http": {Denied: classify.Reached}}}
	viaProxy := classify.Result{Outcome: model.NonEnforcing, Channels: map[string]classify.ChannelResult{
		"direct": {Denied: classify.NoRoute}, "http": {Denied: classify.Reached}, "https": {Denied: classify.Reached}}}
	warn := "⚠ Sandbox disabled: sandbox is enabled but dependencies are missing: socat not installed\nagent: scripted model saw: first-turn"
	cases := []struct {
		name   string
		j      claudeJudge
		r      classify.Result
		stderr string
		pass   bool
		hint   string
	}{
		{"enforced", mustBeSafe, correct, "", true, "enforced"},
		{"refused", mustBeSafe, refused, "", true, "refused"},
		{"escape", mustBeSafe, direct, "", false, "unsandboxed under C: the command ran outside the sandbox"},
		{"approved", mustBeSafe, viaProxy, "", false, "the sandbox's proxy approved the denied host, which the policy does not allow, on http, https"},
		{"loud: what the setting allows, a fail-open still", mayRunLoudly, direct, warn, false, "ran unsandboxed, loudly"},
		{"silent", mayRunLoudly, direct, "agent: scripted model saw: first-turn", false, "ran unsandboxed without a word"},
		{"proxy escape is not excused by a warning", mayRunLoudly, viaProxy, warn, false, "proxy-approved"},
		{"off by configuration", notSandboxed, direct, "", false, "not sandboxed by configuration (C)"},
		{"off yet enforced is never correct", notSandboxed, correct, "", false, "enforced although C"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pass, hint, _ := judgeClaude(c.j, c.r, c.stderr, "C")
			if pass != c.pass || !strings.Contains(hint, c.hint) {
				t.Fatalf("pass %v %q, want %v with %q", pass, hint, c.pass, c.hint)
			}
		})
	}
}
