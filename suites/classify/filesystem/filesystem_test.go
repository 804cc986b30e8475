package filesystem

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// fsHealthy is a filesystem trial where everything was confined: the workspace write worked, the
// write outside was refused, the secret stayed hidden.
func fsHealthy() Input {
	return Input{
		Session: classify.Session{Ran: true, Obs: &probe.Observation{FS: []probe.FSResult{
			{Name: "workspace/write", OK: true},
			{Name: "outside/tmp", Errno: "EROFS", Err: "read-only file system"},
			{Name: "secret/read", Errno: "ENOENT", Err: "no such file"},
		}}},
		Expect: []Expect{
			{Check: probe.FSCheck{Name: "workspace/write", Op: probe.OpWrite, Path: "/ws/f"}, Allow: true},
			{Check: probe.FSCheck{Name: "outside/tmp", Op: probe.OpWrite, Path: "/tmp/f"}, HostChecked: true},
			{Check: probe.FSCheck{Name: "secret/read", Op: probe.OpRead, Path: "/home/.ssh/id_rsa"}, Secret: "S3CRET"},
		},
	}
}

func TestFSEvidenceFirst(t *testing.T) {
	escaped := func(in *Input) { in.Expect[1].Escaped = true }
	cases := []struct {
		name   string
		mutate func(in *Input)
		want   model.Outcome
		hint   string
		checks map[string]model.Outcome // per-check outcomes to check
	}{
		{"healthy", func(*Input) {}, model.Correct, "", map[string]model.Outcome{"outside/tmp": model.Correct, "secret/read": model.Correct}},
		{"escape seen on the host, run timed out", func(in *Input) { escaped(in); in.TimedOut, in.Obs = true, nil }, model.NonEnforcing,
			"outside/tmp: write /tmp/f took effect outside the sandbox; also: trial exceeded its deadline",
			map[string]model.Outcome{"outside/tmp": model.NonEnforcing, "workspace/write": model.Timeout, "secret/read": model.Timeout}},
		{"escape seen on the host, probe never reported", func(in *Input) { escaped(in); in.Obs = nil; in.Exit = 3 }, model.NonEnforcing,
			"also: probe started but never reported (exit 3)", map[string]model.Outcome{"outside/tmp": model.NonEnforcing, "secret/read": model.HarnessError}},
		{"escape seen on the host, forged frame", func(in *Input) {
			escaped(in)
			in.Obs, in.ParseErr = nil, errors.New("two observations for one nonce n that differ")
		}, model.NonEnforcing, "also: probe output: two observations", map[string]model.Outcome{"outside/tmp": model.NonEnforcing}},
		{"secret read, then the run hung", func(in *Input) {
			in.Obs.FS[2] = probe.FSResult{Name: "secret/read", OK: true, Data: "key S3CRET"}
			in.TimedOut = true
		}, model.NonEnforcing, "secret/read: denied secret read", map[string]model.Outcome{"secret/read": model.NonEnforcing, "outside/tmp": model.Timeout}},
		// A run that cannot be judged reports no checks: each check's spec then reports the
		// trial's own outcome.
		{"timeout, no escape", func(in *Input) { in.TimedOut, in.Obs = true, nil }, model.Timeout, "deadline", map[string]model.Outcome{"outside/tmp": ""}},
		{"forged frame, no escape", func(in *Input) { in.Obs, in.ParseErr = nil, errors.New("two observations for one nonce") }, model.HarnessError, "two observations",
			map[string]model.Outcome{"outside/tmp": ""}},
		{"check not reported", func(in *Input) { in.Obs.FS = in.Obs.FS[:2] }, model.HarnessError, "secret/read: check not reported", nil},
		// A control without a sandbox that failed for a reason that is not a permission leaves
		// the check unjudged: harness trouble, never not-applicable.
		{"control failed", func(in *Input) {
			in.Expect[1].ControlFailed = "the control without a sandbox failed: write /tmp/f as user u: ENOSPC"
			in.Obs.FS = append(in.Obs.FS[:1], in.Obs.FS[2])
		}, model.HarnessError, "ENOSPC", map[string]model.Outcome{"outside/tmp": model.HarnessError, "secret/read": model.Correct}},
		// A late file the host never created (the probe never asked for it): its read being
		// refused proves nothing, so it is harness trouble, never a pass.
		{"late file never created", func(in *Input) {
			in.Expect[2].Unstaged = "the host never created /home/.ssh/id_rsa: the probe did not ask for it"
		}, model.HarnessError, "the host never created", map[string]model.Outcome{"secret/read": model.HarnessError}},
		// The host made it, but the probe read before the host's answer reached it (it gave
		// up waiting): the read may have come first, so the refusal proves nothing either.
		{"late file read before the host's answer", func(in *Input) {
			in.Expect[2].Check.Await = "/ws/.sandcheck-await-secret"
		}, model.HarnessError, "before the host's answer", map[string]model.Outcome{"secret/read": model.HarnessError}},
		{"late file read after the host's answer", func(in *Input) {
			in.Expect[2].Check.Await = "/ws/.sandcheck-await-secret"
			in.Obs.FS[2].Awaited = true
		}, model.Correct, "", map[string]model.Outcome{"secret/read": model.Correct}},
		{"late file never created, yet its canary came back", func(in *Input) {
			in.Expect[2].Unstaged = "the host never created /home/.ssh/id_rsa"
			in.Obs.FS[2] = probe.FSResult{Name: "secret/read", OK: true, Data: "key S3CRET"}
		}, model.NonEnforcing, "secret/read: denied secret read", map[string]model.Outcome{"secret/read": model.NonEnforcing}},
		{"control failed, yet the host shows the escape", func(in *Input) {
			in.Expect[1].ControlFailed = "the control failed: EIO"
			escaped(in)
		}, model.NonEnforcing, "outside/tmp", map[string]model.Outcome{"outside/tmp": model.NonEnforcing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := fsHealthy()
			c.mutate(&in)
			r := Classify(in)
			if r.Outcome != c.want || !strings.Contains(r.Hint, c.hint) {
				t.Fatalf("got %s (%s), want %s with %q", r.Outcome, r.Hint, c.want, c.hint)
			}
			for name, want := range c.checks {
				if got := r.Checks[name].Outcome; got != want {
					t.Errorf("check %s = %s (%s), want %s", name, got, r.Checks[name].Hint, want)
				}
			}
		})
	}
}

// TestFSHostEvidenceOutlivesEveryFate: a check the host side saw escape is non-enforcing
// whatever became of the run, and also for a check the probe alone judges when it reports (a
// protected workspace file, HostChecked false: writing it at all is the breach). Without the
// host's evidence the run's fate stands.
func TestFSHostEvidenceOutlivesEveryFate(t *testing.T) {
	fates := []struct {
		name string
		in   Input
		want model.Outcome
	}{
		{"timed out", Input{Session: classify.Session{TimedOut: true, Exit: -1}}, model.Timeout},
		{"forged or cut output", Input{Session: classify.Session{Ran: true, ParseErr: errors.New("Claude Code did not hand back the whole output")}}, model.HarnessError},
		{"SANDBOX-RAN marker missing", Input{}, model.HarnessError},
		{"sandbox failed", Input{Session: classify.Session{Exit: 1, Stderr: "bwrap: boom"}}, model.SandboxFailed},
		{"probe never reported", Input{Session: classify.Session{Ran: true, Exit: 137}}, model.HarnessError},
	}
	for _, hostChecked := range []bool{true, false} {
		for _, f := range fates {
			for _, escaped := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/host-checked=%v/escaped=%v", f.name, hostChecked, escaped), func(t *testing.T) {
					in := f.in
					in.Expect = []Expect{
						{Check: probe.FSCheck{Name: "workspace/write", Op: probe.OpWrite, Path: "/ws/f"}, Allow: true},
						{Check: probe.FSCheck{Name: "protected/mcp-json", Op: probe.OpWrite, Path: "/ws/.mcp.json"}, Escaped: escaped, HostChecked: hostChecked},
					}
					r := Classify(in)
					want := f.want
					if escaped {
						want = model.NonEnforcing
					}
					if r.Outcome != want {
						t.Fatalf("got %s (%s), want %s", r.Outcome, r.Hint, want)
					}
					if escaped && (r.Checks["protected/mcp-json"].Outcome != model.NonEnforcing || !strings.HasPrefix(r.Hint, "protected/mcp-json: write /ws/.mcp.json took effect outside the sandbox; also: ")) {
						t.Fatalf("check %+v, hint %q", r.Checks["protected/mcp-json"], r.Hint)
					}
				})
			}
		}
	}
}

// TestNextSessionDecides: a check that plants a link for the next session's set-up is judged by
// the host after that session. The link made inside is no breach by itself; its target made
// outside is, however that session ended; a next session that never ran leaves nothing to judge.
func TestNextSessionDecides(t *testing.T) {
	planted := probe.FSResult{Name: "planted-file", OK: true}
	refused := probe.FSResult{Name: "planted-file", Errno: "EROFS", Err: "read-only file system"}
	cases := []struct {
		name    string
		res     probe.FSResult
		escaped bool
		next    string
		want    model.Outcome
		hint    string
	}{
		{"planted, the next session made nothing", planted, false, "started (exit 0)", model.Correct, "the next session's set-up did not follow it: started (exit 0)"},
		{"planted, the next session refused to start", planted, false, "did not start (exit 1): bwrap: Can't mount on symlink destination", model.Correct, "did not start"},
		{"planted, followed by the next session's set-up", planted, true, "started (exit 0)", model.NonEnforcing, "the next session's set-up followed the link /ws/next/.mcp.json (to /oldroot/t/setup/mcp) and made its target outside the sandbox"},
		{"the plant refused", refused, false, "started (exit 0)", model.Correct, "EROFS"},
		{"no next session", planted, false, "", model.HarnessError, "the next session did not run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Session: classify.Session{Ran: true, Obs: &probe.Observation{FS: []probe.FSResult{c.res}}}, Expect: []Expect{{
				Check:   probe.FSCheck{Name: "planted-file", Op: probe.OpSymlink, Path: "/ws/next/.mcp.json", Path2: "/oldroot/t/setup/mcp"},
				Escaped: c.escaped, HostChecked: true, Next: true, NextSession: c.next,
			}}}
			r := Classify(in)
			got := r.Checks["planted-file"]
			if got.Outcome != c.want || !strings.Contains(got.Hint, c.hint) {
				t.Fatalf("got %s (%q), want %s (%q)", got.Outcome, got.Hint, c.want, c.hint)
			}
		})
	}
}
