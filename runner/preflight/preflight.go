//go:build linux

// Package preflight is `sandcheck preflight` as a library: one fast network trial with the
// user's own settings (and, when asked, one filesystem trial), judged against the target's known
// findings. It fails closed: an outcome other than correct that no known finding covers fails
// the check, and a known finding that fails open is only let through when the caller accepts
// the pinned findings (WriteKnown).
package preflight

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/harness/network"
)

// Result is what the check saw.
type Result struct {
	Subject knownfindings.Subject // the target, version, fault and user checked
	Version string                // the target's build
	// Matched are the known findings the check showed (fail-closed and fail-open ones).
	Matched []knownfindings.Match
	// Summary says what held, for the line a passing check prints.
	Summary string
	// Failure says why the check failed outside the known findings; "" when it did not.
	Failure string
}

// Check runs the network trial of cfg, then with withFS the filesystem trial, and decides each
// failure against known (nil: nothing is known, every failure fails). An error means the
// check could not be set up.
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
	if r := nt.Result; r.Outcome != model.Correct {
		hosts := knownfindings.Hosts{Allowed: nt.Allowed.Name, Denied: nt.Denied.Name}
		d := known.Decide(res.Subject, knownfindings.Verdict{Scenario: "network/seed", Outcome: r.Outcome, Hint: r.Hint,
			Breaches: knownfindings.NetworkBreaches(r, "", hosts)})
		if len(d.New) > 0 {
			res.Failure = fmt.Sprintf("%s: %s", Describe(r.Outcome), schema.LeadingCause(r.Hint))
			return res, nil
		}
		res.Matched = append(res.Matched, d.Matched...)
		res.Summary = fmt.Sprintf("network %s, known findings only", r.Outcome)
	}
	if !withFS {
		return res, nil
	}
	ft, err := filesystem.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("could not set up the filesystem check: %w", err)
	}
	r := ft.Result
	if r.Outcome == model.Correct {
		res.Summary += "; filesystem confined"
		return res, nil
	}
	var ws string
	if len(ft.Policy.WritablePaths) > 0 {
		ws = ft.Policy.WritablePaths[0]
	}
	var paths map[string]string
	if ft.Observation != nil {
		paths = knownfindings.FSPathsHome(ft.Observation.FS, ws, ft.Home())
	}
	d := known.Decide(res.Subject, knownfindings.Verdict{Scenario: "filesystem/isolation", Outcome: r.Outcome, Hint: r.Hint,
		Breaches: knownfindings.FSBreaches(r, filesystem.CheckNames(), paths)})
	res.Matched = append(res.Matched, d.Matched...)
	if len(d.New) > 0 {
		res.Failure = fmt.Sprintf("filesystem %s: %s (not a known finding of %s)", r.Outcome, strings.Join(knownfindings.Words(d.New), "; "), res.Subject)
		return res, nil
	}
	res.Summary += "; filesystem confined but for known findings"
	return res, nil
}

// WriteKnown prints each known finding the check showed: a fail-closed one as a warning, a
// fail-open one as accepted (accept) or as a failure. It reports whether every one was let
// through.
func WriteKnown(w io.Writer, ms []knownfindings.Match, accept bool, on knownfindings.Subject) bool {
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
