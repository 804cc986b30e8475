//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/runsummary"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/suites/harness"
)

func init() {
	register("preflight", "one fast network trial with your settings; exit 0 only if nothing fails open (see --help)", preflightCmd)
}

// preflightCmd is the seed reporter's hand-written probe as a product: drive one sandboxed
// request to an allowed and a denied host, and fail closed unless the outcome is `correct`.
// A known finding of the target (targets/NAME/knownfindings.yaml) is not news, but a fail-open one still fails
// unless the user accepts the pinned findings by name with --accept-known.
func preflightCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("preflight", `[--target srt] [--settings FILE] [--timeout 5s] [--filesystem] [--accept-known]

Exit status:
  0  the sandbox enforces: the allowed host reachable, the denied one blocked on every channel
     (with --filesystem also: writes only in the workspace, the secret unreadable), except for
     known findings of this target version (targets/NAME/knownfindings.yaml): a fail-closed one (the allowed host
     blocked, a dead proxy, an allowed write refused) is printed as a warning; a fail-open one
     (the denied host reached, a file written or read against the policy) only with
     --accept-known, which lists each accepted finding: its id, what it breached, its note.
  1  a fail-open observation, known or not, that was not accepted; any failure no known finding
     covers; or the check could not be set up.
  2  usage or configuration error.`, `  sandcheck preflight --settings ~/.srt-settings.json && run-my-agent
  sandcheck preflight --filesystem --accept-known   # srt 0.0.83: accepts its known git-hooks finding, by name
  sudo sandcheck preflight --user "$SUDO_USER"      # the sandbox as the account your agent runs as
  sandcheck preflight --fault bridge-absent    # see what a broken sandbox looks like (exit 1)
  sandcheck preflight --target claude-code --settings ~/.claude/settings.json   # Claude Code itself, scripted model
  sandcheck preflight --target claude-code --target-settings '{"permission_mode":"bypass"}'   # as claude -p --dangerously-skip-permissions

  In a GitHub Actions job, before the step that relies on the sandbox:
    - run: sandcheck preflight --settings .srt-settings.json --timeout 10s`, stderr)
	var o trialOptions
	o.bind(fs, true)
	timeout := fs.Duration("timeout", 10*time.Second, "give up (and fail) after this long")
	withFS := fs.Bool("filesystem", false, "also check filesystem isolation (write only the workspace, secret unreadable)")
	acceptKnown := fs.Bool("accept-known", false, "accept the target's pinned fail-open known findings (each is listed); without it they fail")
	quiet := fs.Bool("q", false, "print nothing on success (accepted findings and warnings are still printed)")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	cfg, err := o.config()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: %v\n", err)
		return 2
	}
	cfg.Timeout = *timeout
	ctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()
	known, err := knownfindings.Load()
	if err != nil {
		// Without the list nothing is known: every failure fails.
		fmt.Fprintf(stderr, "sandcheck preflight: warning: %v\n", err)
	}

	start := time.Now()
	nt, err := harness.RunNetwork(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: FAIL could not set up the check: %v\n", err)
		return 1
	}
	on := knownfindings.Subject{Target: nt.Target, Version: nt.TargetVersion, Fault: cfg.Fault, User: cfg.User}
	var matched []knownfindings.Match
	summary := fmt.Sprintf("%s reachable, %s blocked on every channel", nt.Allowed.Name, nt.Denied.Name)
	if r := nt.Result; r.Outcome != model.Correct {
		hosts := knownfindings.Hosts{Allowed: nt.Allowed.Name, Denied: nt.Denied.Name}
		d := known.Decide(on, knownfindings.Verdict{Scenario: "network/seed", Outcome: r.Outcome, Hint: r.Hint,
			Breaches: knownfindings.NetworkBreaches(r, "", hosts)})
		if len(d.New) > 0 {
			fmt.Fprintf(stderr, "sandcheck preflight: FAIL %s: %s\n", describe(r.Outcome), schema.LeadingCause(r.Hint))
			return 1
		}
		matched = append(matched, d.Matched...)
		summary = fmt.Sprintf("network %s, known findings only", r.Outcome)
	}
	if *withFS {
		ft, err := harness.RunFilesystem(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck preflight: FAIL could not set up the filesystem check: %v\n", err)
			return 1
		}
		r := ft.Result
		if r.Outcome == model.Correct {
			summary += "; filesystem confined"
		} else {
			var ws string
			if len(ft.Policy.WritablePaths) > 0 {
				ws = ft.Policy.WritablePaths[0]
			}
			var paths map[string]string
			if ft.Observation != nil {
				paths = knownfindings.FSPathsHome(ft.Observation.FS, ws, ft.Home())
			}
			d := known.Decide(on, knownfindings.Verdict{Scenario: "filesystem/isolation", Outcome: r.Outcome, Hint: r.Hint,
				Breaches: knownfindings.FSBreaches(r, harness.FSCheckNames(), paths)})
			if len(d.New) > 0 {
				reportKnown(stderr, append(matched, d.Matched...), *acceptKnown, on)
				fmt.Fprintf(stderr, "sandcheck preflight: FAIL filesystem %s: %s (not a known finding of %s)\n",
					r.Outcome, strings.Join(knownfindings.Words(d.New), "; "), on)
				return 1
			}
			matched = append(matched, d.Matched...)
			summary += "; filesystem confined but for known findings"
		}
	}
	if !reportKnown(stderr, matched, *acceptKnown, on) {
		return 1
	}
	if !*quiet {
		fmt.Fprintf(stdout, "sandcheck preflight: ok: %s (%s as %s, %.2fs)\n", summary, nt.TargetVersion, runsummary.AsUser(cfg.User), time.Since(start).Seconds())
	}
	return 0
}

// reportKnown prints each known finding the check showed: a fail-closed one as a warning, a
// fail-open one as accepted (with --accept-known) or as a failure. It reports whether every one
// was let through.
func reportKnown(w io.Writer, ms []knownfindings.Match, accept bool, on knownfindings.Subject) bool {
	ok := true
	var refused int
	for _, m := range ms {
		f := m.Finding
		switch {
		case m.Breach.Outcome.Severity() != model.SevFailOpen:
			fmt.Fprintf(w, "sandcheck preflight: warning: known finding %s (%s): %s: %s\n", f.ID, m.Breach.Outcome, m.Breach.What, f.Note)
		case accept:
			fmt.Fprintf(w, "sandcheck preflight: accepted known finding %s (fail-open, %s): %s: %s\n", f.ID, m.Breach.Outcome, m.Breach.What, f.Note)
		default:
			ok = false
			refused++
			fmt.Fprintf(w, "sandcheck preflight: FAIL known finding %s (fail-open, %s): %s: %s\n", f.ID, m.Breach.Outcome, m.Breach.What, f.Note)
		}
	}
	if refused > 0 {
		fmt.Fprintf(w, "sandcheck preflight: %d fail-open known finding(s) of %s: the sandbox does not enforce there; pass --accept-known to accept the pinned findings\n", refused, on)
	}
	return ok
}

// describe turns an outcome into the words of the seed report.
func describe(o model.Outcome) string {
	switch o {
	case model.ProxyDead:
		return "proxy dead"
	case model.NonEnforcing:
		return "proxy up but NOT ENFORCING (a denied host was reachable)"
	case model.AllowedBlocked:
		return "allowed host blocked"
	case model.SandboxFailed:
		return "sandbox refused to start"
	}
	return string(o)
}
