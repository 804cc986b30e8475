package verdict

import (
	"reflect"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/classify/filesystem"
)

func TestFSPath(t *testing.T) {
	const trial, ws, home = "/tmp/sandcheck-trial-123", "/tmp/sandcheck-trial-123/workspace", "/root"
	for in, want := range map[string]string{
		ws + "/newrepo/.git/hooks/pre-commit":                    "$WORKSPACE/newrepo/.git/hooks/pre-commit",
		ws + "/../dotdot-sandcheck-fs-0a1b2c3d4e5f6789":          "$WORKSPACE/../dotdot-sandcheck-fs-*",
		trial + "/home/.ssh/id_rsa":                              "$TRIAL/home/.ssh/id_rsa",
		"/proc/self/root" + trial + "/home/.ssh/id_rsa":          "/proc/self/root$TRIAL/home/.ssh/id_rsa",
		home + "/sandcheck-fs-0a1b2c3d4e5f6789":                  "$HOME/sandcheck-fs-*",
		"/tmp/claude/sandcheck-fs-0a1b2c3d4e5f6789":              "/tmp/claude/sandcheck-fs-*",
		"/etc/sandcheck-fs-ff":                                   "/etc/sandcheck-fs-*",
		"/tmp/sandcheck-trial-1234/workspace/not-this-workspace": "/tmp/sandcheck-trial-1234/workspace/not-this-workspace",
		"": "",
	} {
		if got := FSPath(in, ws, trial, home); got != want {
			t.Errorf("FSPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFSBreaches(t *testing.T) {
	r := filesystem.Result{Outcome: model.NonEnforcing, Checks: map[string]filesystem.CheckResult{
		"workspace/write":              {Name: "workspace/write", Outcome: model.Correct},
		"workspace/tmpdir":             {Name: "workspace/tmpdir", Outcome: model.AllowedBlocked, Errno: "ENOENT"},
		"secret/read":                  {Name: "secret/read", Outcome: model.NonEnforcing},
		"secret/proc-root":             {Name: "secret/proc-root", Outcome: model.NotApplicable},
		"protected/git-hooks-new-repo": {Name: "protected/git-hooks-new-repo", Outcome: model.NonEnforcing},
		"escape/unlisted":              {Name: "escape/unlisted", Outcome: model.HarnessError, Hint: "check not reported by the probe"},
	}}
	paths := map[string]string{"workspace/tmpdir": "/tmp/claude/sandcheck-fs-*", "secret/read": "$TRIAL/home/.ssh/id_rsa",
		"protected/git-hooks-new-repo": "$WORKSPACE/newrepo/.git/hooks/pre-commit"}
	got := FSBreaches(r, []string{"workspace/write", "workspace/tmpdir", "secret/read", "secret/proc-root", "protected/git-hooks-new-repo"}, paths)
	want := []model.Breach{
		{Scenario: "filesystem/workspace/tmpdir", Check: "/tmp/claude/sandcheck-fs-*", Outcome: model.AllowedBlocked, What: "write /tmp/claude/sandcheck-fs-* refused (ENOENT)"},
		{Scenario: "filesystem/secret/read", Check: "$TRIAL/home/.ssh/id_rsa", Outcome: model.NonEnforcing, What: "read $TRIAL/home/.ssh/id_rsa"},
		{Scenario: "filesystem/protected/git-hooks-new-repo", Check: "$WORKSPACE/newrepo/.git/hooks/pre-commit", Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit"},
		// Not in the order given, unknown path: still a breach, with a check no finding has.
		{Scenario: "filesystem/escape/unlisted", Outcome: model.HarnessError, What: "write (path not reported): harness-error (check not reported by the probe)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestNetworkBreaches(t *testing.T) {
	r := classify.Result{Outcome: model.NonEnforcing, Channels: map[string]classify.ChannelResult{
		model.ChanHTTP:   {Channel: model.ChanHTTP, Outcome: model.NonEnforcing, Allowed: classify.Reached, Denied: classify.Reached, Hint: "denied host reached (denied)"},
		model.ChanHTTPS:  {Channel: model.ChanHTTPS, Outcome: model.AllowedBlocked, Allowed: classify.PolicyBlocked, Denied: classify.PolicyBlocked},
		model.ChanSOCKS:  {Channel: model.ChanSOCKS, Outcome: model.ProxyDead},
		model.ChanDirect: {Channel: model.ChanDirect, Outcome: model.NonEnforcing, Allowed: classify.Reached, Denied: classify.NoRoute},
		model.ChanDNS:    {Channel: model.ChanDNS, Outcome: model.Correct},
		"quic":           {Channel: "quic", Outcome: model.HarnessError},
		// The client saw the denied host refused, its server logged the request: egress to it.
		"udp": {Channel: "udp", Outcome: model.NonEnforcing, Allowed: classify.Reached, Denied: classify.PolicyBlocked,
			Server: "allowed host logged GET /x; denied host logged GET /y"},
	}}
	h := Hosts{Allowed: "allowed.sandcheck.test", Denied: "denied.sandcheck.test"}
	var checks, scenarios, whats []string
	for _, b := range NetworkBreaches(r, "", h) {
		checks, scenarios, whats = append(checks, b.Check), append(scenarios, b.Scenario), append(whats, b.What)
	}
	if want := []string{"http:denied", "https:allowed", "socks:proxy", "direct:allowed", "quic", "udp:denied"}; !reflect.DeepEqual(checks, want) {
		t.Errorf("checks %q, want %q", checks, want)
	}
	if scenarios[0] != "network/channel/http" || scenarios[4] != "network/channel/quic" {
		t.Errorf("scenarios %q", scenarios)
	}
	if whats[0] != "http: denied.sandcheck.test reached" || whats[1] != "https: allowed.sandcheck.test refused" ||
		whats[2] != "socks: proxy dead" || whats[3] != "direct: allowed.sandcheck.test reached outside the policy" {
		t.Errorf("words %q", whats)
	}
	only := NetworkBreaches(r, model.NonEnforcing, h)
	if len(only) != 3 || only[0].Check != "http:denied" || only[1].Check != "direct:allowed" || only[2].Check != "udp:denied" {
		t.Errorf("only non-enforcing: %+v", only)
	}
}

func TestSessionBreaches(t *testing.T) {
	ws := "/tmp/t/workspace"
	sessions := []classify.Result{
		{Outcome: model.Correct},
		{Outcome: model.SandboxFailed, Hint: "bwrap: Can't find source path " + ws + "/.gitconfig"},
		{Outcome: model.SandboxFailed, Hint: "bwrap: Can't find source path " + ws + "/.bashrc"},
		{Outcome: model.NonEnforcing, Channels: map[string]classify.ChannelResult{
			model.ChanHTTP: {Channel: model.ChanHTTP, Outcome: model.NonEnforcing, Denied: classify.Reached}}},
		// Non-enforcing by the server's log alone: no channel shows it.
		{Outcome: model.NonEnforcing, Hint: "denied host received http GET /x", Channels: map[string]classify.ChannelResult{
			model.ChanHTTP: {Channel: model.ChanHTTP, Outcome: model.Correct}}},
	}
	got := SessionBreaches("concurrency/shared-workspace/k4", sessions, []string{ws + "/.claude", ws + "/.gitconfig (removed)"}, []string{ws, ws, ws, ws, ws}, Hosts{})
	var checks []string
	for _, b := range got {
		if b.Scenario != "concurrency/shared-workspace/k4" {
			t.Errorf("breach keyed elsewhere: %+v", b)
		}
		checks = append(checks, b.Check+"="+string(b.Outcome))
	}
	// The same check and outcome in two sessions is one breach, whatever the hints say.
	want := []string{"session=sandbox-failed", "http:denied=non-enforcing", "session=non-enforcing", "leftover:.claude=residue", "removed:.gitconfig=residue"}
	if !reflect.DeepEqual(checks, want) {
		t.Fatalf("checks %q, want %q", checks, want)
	}
	if got[3].What != "left $WORKSPACE/.claude behind" || got[1].What != "a session: http: the denied host reached" ||
		got[0].What != "a session failed as a whole: sandbox-failed (bwrap: Can't find source path $WORKSPACE/.gitconfig)" {
		t.Errorf("words: %+v", got)
	}
}

func TestConditionBreach(t *testing.T) {
	egress := []string{"denied http GET /http/ab on denied.sandcheck.test:80 from 198.18.0.1:4242"}
	b := ConditionBreach("failclosed/socat-missing", "socat-missing", model.NonEnforcing, "ran unconfined", egress)
	want := model.Breach{Scenario: "failclosed/socat-missing", Check: "socat-missing", Outcome: model.NonEnforcing,
		What: "condition socat-missing: ran unconfined", Egress: egress}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("ConditionBreach = %+v, want %+v", b, want)
	}
	// A fail-closed condition accounts for no egress: accepting it must not accept a hit.
	if b := ConditionBreach("failclosed/socat-missing", "socat-missing", model.ProxyDead, "ran with a dead proxy", egress); b.Egress != nil {
		t.Errorf("a proxy-dead condition breach lists egress %v", b.Egress)
	}
}

// TestFSCheckBreachSaysTheOperation: a breach says what the command did, from the check's own
// operation, not from its name (the fs-interplay and privilege classes' reads are named
// deny-read-dir, unmount-deny-read, ...).
func TestFSCheckBreachSaysTheOperation(t *testing.T) {
	for _, c := range []struct {
		r    filesystem.CheckResult
		want string
	}{
		{filesystem.CheckResult{Name: "unmount-deny-read", Op: "read", Outcome: model.NonEnforcing}, "read $HOME/proj/sub/private/key"},
		{filesystem.CheckResult{Name: "secret/read", Outcome: model.NonEnforcing}, "read $HOME/proj/sub/private/key"},
		{filesystem.CheckResult{Name: "deny-read-file-rename", Op: "rename", Outcome: model.NonEnforcing}, "write $HOME/proj/sub/private/key"},
		{filesystem.CheckResult{Name: "protected-bashrc-from-subdir", Op: "append", Outcome: model.NonEnforcing}, "write $HOME/proj/sub/private/key"},
		// The setup class's link is no breach by itself: the next session's set-up followed it out.
		{filesystem.CheckResult{Name: "planted-file", Op: "symlink", Outcome: model.NonEnforcing}, "link $HOME/proj/sub/private/key, followed out of the sandbox by the next session's set-up"},
	} {
		if got := FSCheckBreach(c.r, "$HOME/proj/sub/private/key").What; got != c.want {
			t.Errorf("%s (%s): %q, want %q", c.r.Name, c.r.Op, got, c.want)
		}
	}
}
