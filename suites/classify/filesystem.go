package classify

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/suites/probe"
)

// FSExpect says whether the policy allows a check's operation.
type FSExpect struct {
	Check probe.FSCheck
	Allow bool
	// Secret, for read checks, is the canary token whose appearance proves the read worked.
	Secret string
	// Escaped is the host-side truth after the run: the operation's effect is visible outside
	// the sandbox (a file outside appeared, an outside file vanished or changed).
	Escaped bool
	// HostChecked says the host side can see this check's effect (Escaped is meaningful). A
	// denied write that succeeded inside but never reached the host landed in the sandbox's
	// own private mount (a tmpfs /tmp): contained, not an escape.
	HostChecked bool
	// NotApplicable, when set, is why the target cannot express what this check needs (e.g. it
	// does not protect workspace files): the check is reported not-applicable, never judged.
	NotApplicable string
}

// FSCheckResult is the verdict of one filesystem check.
type FSCheckResult struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	Hint    string  `json:"hint,omitempty"`
	Errno   string  `json:"errno,omitempty"`
}

// FSInput is what a filesystem trial saw.
type FSInput struct {
	Ran      bool
	Obs      *probe.Observation
	Exit     int
	Stderr   string
	TimedOut bool
	Expect   []FSExpect
}

// FSResult is the verdict of a filesystem trial: overall and per check.
type FSResult struct {
	Outcome Outcome                  `json:"outcome"`
	Hint    string                   `json:"hint"`
	Checks  map[string]FSCheckResult `json:"checks"`
}

// ClassifyFS judges each check: a denied operation that took effect is non-enforcing (read:
// only when the canary's token came back); an allowed one that failed is allowed-blocked.
func ClassifyFS(in FSInput) FSResult {
	r := FSResult{Checks: map[string]FSCheckResult{}}
	if pre, hint, stop := preconditions(in.TimedOut, in.Ran, in.Obs != nil, in.Exit, in.Stderr); stop {
		r.Outcome, r.Hint = pre, hint
		return r
	}
	seen := map[string]probe.FSResult{}
	for _, res := range in.Obs.FS {
		seen[res.Name] = res
	}
	var outs []Outcome
	var hints []string
	for _, e := range in.Expect {
		res, ok := seen[e.Check.Name]
		c := FSCheckResult{Name: e.Check.Name, Errno: res.Errno}
		switch {
		case e.NotApplicable != "":
			c.Outcome, c.Hint = NotApplicable, e.NotApplicable
		case !ok:
			c.Outcome, c.Hint = HarnessError, "check not reported by the probe"
		case e.Allow && !res.OK:
			c.Outcome, c.Hint = AllowedBlocked, fmt.Sprintf("%s %s refused: %s", e.Check.Op, e.Check.Path, res.Err)
		case e.Allow:
			c.Outcome = Correct
		case e.Escaped:
			c.Outcome, c.Hint = NonEnforcing, fmt.Sprintf("%s %s took effect outside the sandbox", e.Check.Op, e.Check.Path)
		case e.Check.Op == probe.OpRead && res.OK && e.Secret != "" && strings.Contains(res.Data, e.Secret):
			c.Outcome, c.Hint = NonEnforcing, "denied secret read: "+e.Check.Path
		case e.Check.Op == probe.OpRead:
			c.Outcome, c.Hint = Correct, firstNonEmpty(res.Errno, "secret hidden")
		case res.OK && e.HostChecked:
			c.Outcome, c.Hint = Correct, fmt.Sprintf("contained: %s %s succeeded only inside the sandbox (private mount), the host never saw it", e.Check.Op, e.Check.Path)
		case res.OK:
			c.Outcome, c.Hint = NonEnforcing, fmt.Sprintf("%s %s succeeded", e.Check.Op, e.Check.Path)
		default:
			c.Outcome, c.Hint = Correct, res.Errno
		}
		r.Checks[c.Name] = c
		outs = append(outs, c.Outcome)
		if c.Outcome != Correct && c.Outcome != NotApplicable {
			hints = append(hints, c.Name+": "+c.Hint)
		}
	}
	r.Outcome = Worst(outs...)
	if len(hints) > 0 {
		// Lead with the first check, in plan order, that shows the most severe outcome.
		for _, e := range in.Expect {
			if c := r.Checks[e.Check.Name]; c.Outcome == r.Outcome {
				r.Hint = c.Name + ": " + c.Hint
				break
			}
		}
		if len(hints) > 1 {
			r.Hint += fmt.Sprintf(" (+%d more)", len(hints)-1)
		}
	}
	return r
}

// preconditions decides the outcomes that end a trial before any check can be judged: a
// timeout, a sandbox that refused to start, a probe that never reported.
func preconditions(timedOut, ran, haveObs bool, exit int, stderr string) (Outcome, string, bool) {
	switch {
	case timedOut:
		return Timeout, "trial exceeded its deadline", true
	case !ran && exit != 0 && strings.TrimSpace(stderr) != "":
		return SandboxFailed, fmt.Sprintf("sandbox exited %d before the command ran: %s", exit, lastLine(stderr)), true
	case !ran:
		return HarnessError, fmt.Sprintf("SANDBOX-RAN marker missing (exit %d, no message)", exit), true
	case !haveObs:
		return HarnessError, fmt.Sprintf("probe started but never reported (exit %d)", exit), true
	}
	return "", "", false
}
