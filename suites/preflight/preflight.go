//go:build linux

// Package preflight is `sandcheck preflight` as a library: one fast network trial with the
// user's own settings (and, when asked, one filesystem trial), decided against the target's
// known findings by the rule every tool shares (model.Record.Failure). It fails closed: a
// failure no known finding covers fails the check; a known fail-closed finding is a warning; a
// known fail-open one fails unless the caller accepts the pinned findings (Accept).
package preflight

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// Accept is what preflight lets through: every known finding that does not fail open, and with
// --accept-known every known finding.
func Accept(acceptKnown bool) model.Accept { return model.Accept{FailClosed: true, Every: acceptKnown} }

// Result is what the check saw.
type Result struct {
	Subject knownfindings.Subject // the target, version, fault and user checked
	Version string                // the target's build
	// Trial is the check as a trial: its verdicts (network/seed, and filesystem/isolation with
	// the filesystem check) decided against the known findings, and the network trial's egress.
	Trial model.Record
	// Matched are the known findings the check showed (fail-closed and fail-open ones).
	Matched []knownfindings.Match
	// NotApplicable names the filesystem checks the target could not be judged on.
	NotApplicable []string
	// Summary says what held, for the line a passing check prints.
	Summary string
	// failures say, per verdict, why it failed outside the known findings.
	failures []string
}

// Failure says why the check fails under accept: a failure or fail-open evidence no accepted
// finding covers; "" when it passes.
func (r *Result) Failure(accept model.Accept) string {
	if r.Trial.Failure().MetBy(accept) {
		return ""
	}
	if len(r.failures) > 0 {
		return strings.Join(r.failures, "; ")
	}
	if lines := r.Trial.UnownedEgress(); len(lines) > 0 {
		return "the fixture servers logged egress no verdict accounts for: " + strings.Join(lines, "; ")
	}
	return "known fail-open findings not accepted (see above)"
}

// Check runs the network trial of cfg, then with withFS the filesystem trial, and decides each
// verdict against known (nil: nothing is known, every failure fails). An error means the check
// could not be set up.
func Check(ctx context.Context, cfg harness.Config, known knownfindings.Set, withFS bool) (*Result, error) {
	nt, err := network.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("could not set up the check: %w", err)
	}
	res := &Result{
		Subject: knownfindings.Subject{Target: nt.Target, Version: nt.TargetVersion, Fault: cfg.Fault, User: cfg.User},
		Version: nt.TargetVersion,
		Summary: fmt.Sprintf("%s reachable, %s blocked on every channel", nt.Allowed.Name, nt.Denied.Name),
	}
	r := nt.Result
	hosts := verdict.Hosts{Allowed: nt.Allowed.Name, Denied: nt.Denied.Name}
	net := res.decide(known, model.Scenario{Name: "network/seed", Aggregate: true, Outcome: r.Outcome, Pass: r.Outcome == model.Correct,
		Hint: r.Hint, Breaches: verdict.NetworkBreaches(r, "", hosts)})
	res.Trial = model.Record{Outcome: r.Outcome, Hint: r.Hint, Egress: r.Egress, Scenarios: []model.Scenario{net.Verdict}}
	if len(net.New) > 0 {
		cause, _, _ := strings.Cut(r.Hint, "; ") // the leading cause, before the per-channel details
		res.failures = append(res.failures, fmt.Sprintf("%s: %s", Describe(r.Outcome), cause))
	}
	if r.Outcome != model.Correct && len(net.New) == 0 {
		res.Summary = fmt.Sprintf("network %s, known findings only", r.Outcome)
	}
	if !withFS {
		return res, nil
	}
	ft, err := filesystem.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("could not set up the filesystem check: %w", err)
	}
	fr := ft.Result
	var ws string
	if len(ft.Policy.WritablePaths) > 0 {
		ws = ft.Policy.WritablePaths[0]
	}
	var paths map[string]string
	if ft.Observation != nil {
		paths = verdict.FSPathsHome(ft.Observation.FS, ws, ft.Home())
	}
	fsv := res.decide(known, model.Scenario{Name: "filesystem/isolation", Aggregate: true, Outcome: fr.Outcome, Pass: fr.Outcome == model.Correct,
		Hint: fr.Hint, Breaches: verdict.FSBreaches(fr, filesystem.CheckNames(), paths)})
	res.Trial.Scenarios = append(res.Trial.Scenarios, fsv.Verdict)
	res.Trial.Outcome, res.Trial.Hint = model.TrialOutcome(res.Trial.Scenarios)
	if len(res.Trial.Egress) > 0 {
		res.Trial.Outcome = model.NonEnforcing
	}
	for _, name := range filesystem.CheckNames() {
		if c, ok := fr.Checks[name]; ok && c.Outcome == model.NotApplicable {
			res.NotApplicable = append(res.NotApplicable, name+" ("+c.Hint+")")
		}
	}
	switch {
	case len(fsv.New) > 0:
		res.failures = append(res.failures, fmt.Sprintf("filesystem %s: %s (not a known finding of %s)", fr.Outcome, strings.Join(model.Words(fsv.New), "; "), res.Subject))
	case fr.Outcome == model.Correct:
		res.Summary += "; filesystem confined"
	default:
		res.Summary += "; filesystem confined but for known findings"
	}
	if len(res.NotApplicable) > 0 {
		res.Summary += fmt.Sprintf(" (%d check(s) not applicable: %s)", len(res.NotApplicable), strings.Join(res.NotApplicable, ", "))
	}
	return res, nil
}

// decide decides v against known and keeps what it matched.
func (r *Result) decide(known knownfindings.Set, v model.Scenario) knownfindings.Decision {
	d := known.Decide(r.Subject, v)
	r.Matched = append(r.Matched, d.Matched...)
	return d
}

// WriteKnown prints each known finding the check showed: one that accept lets through as a
// warning (fail-closed) or as accepted (fail-open), one it does not as a failure. It reports
// whether every one was let through.
func WriteKnown(w io.Writer, ms []knownfindings.Match, accept model.Accept, on knownfindings.Subject) bool {
	ok := true
	var refused int
	for _, m := range ms {
		f := m.Finding
		open := m.Breach.Outcome.Severity() == model.SevFailOpen
		let := model.Requirement{Needs: []model.Need{{ID: f.ID, FailOpen: open}}}.MetBy(accept)
		switch {
		case let && !open:
			fmt.Fprintf(w, "sandcheck preflight: warning: known finding %s (%s): %s: %s\n", f.ID, m.Breach.Outcome, m.Breach.What, f.Note)
		case let:
			fmt.Fprintf(w, "sandcheck preflight: accepted known finding %s (fail-open, %s): %s: %s\n", f.ID, m.Breach.Outcome, m.Breach.What, f.Note)
		default:
			ok = false
			refused++
			kind := "fail-closed"
			if open {
				kind = "fail-open"
			}
			fmt.Fprintf(w, "sandcheck preflight: FAIL known finding %s (%s, %s): %s: %s\n", f.ID, kind, m.Breach.Outcome, m.Breach.What, f.Note)
		}
	}
	if refused > 0 {
		fmt.Fprintf(w, "sandcheck preflight: %d known finding(s) of %s not accepted: the sandbox does not enforce there; pass --accept-known to accept the pinned findings\n", refused, on)
	}
	return ok
}

// Describe turns an outcome into the words of the seed report.
func Describe(o model.Outcome) string {
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
