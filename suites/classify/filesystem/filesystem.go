// Package filesystem judges filesystem trials: per check, what the host saw of the operation
// outside the sandbox (evidence first), then what the probe reported of it inside, against
// whether the policy allows it.
package filesystem

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// Expect says whether the policy allows a check's operation.
type Expect struct {
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
	// ControlFailed, when set, says the check's control run without a sandbox failed for a
	// reason that is not a permission: the check could not be judged, which is harness trouble,
	// never not-applicable (and never a pass).
	ControlFailed string
	// Unstaged, when set, says the host never made what the check was to meet inside (a file
	// created after the session started, on the probe's word that it had): a refusal then proves
	// nothing, and the check is harness trouble unless its canary came back all the same.
	Unstaged string
	// Next marks a check that plants a link for the next session's set-up to meet, and
	// NextSession says how that session went ("" if it never ran): the host decides after it.
	// A link made inside is no breach by itself, and a plant refused inside met nothing.
	Next        bool
	NextSession string
}

// CheckResult is the verdict of one filesystem check.
type CheckResult struct {
	Name string `json:"name"`
	// Op is the check's operation (probe.OpRead, OpWrite, ...): what a breach of it did.
	Op      string        `json:"op,omitempty"`
	Outcome model.Outcome `json:"outcome"`
	Hint    string        `json:"hint,omitempty"`
	Errno   string        `json:"errno,omitempty"`
}

// Input is what a filesystem trial saw.
type Input struct {
	classify.Session
	Expect []Expect
}

// Result is the verdict of a filesystem trial: overall and per check.
type Result struct {
	Outcome model.Outcome          `json:"outcome"`
	Hint    string                 `json:"hint"`
	Checks  map[string]CheckResult `json:"checks"`
}

// Classify judges each check: a denied operation that took effect is non-enforcing (read:
// only when the canary's token came back); an allowed one that failed is allowed-blocked. The
// host side is evidence first: an escape the host sees is non-enforcing even when the run timed
// out, crashed or never reported.
func Classify(in Input) Result {
	r := Result{Checks: map[string]CheckResult{}}
	seen := map[string]probe.FSResult{}
	if in.Obs != nil {
		for _, res := range in.Obs.FS {
			seen[res.Name] = res
		}
	}
	pre, preHint, stop := in.Preconditions()
	var outs []model.Outcome
	evidence := false
	for _, e := range in.Expect {
		res, ok := seen[e.Check.Name]
		c := judgeFS(e, res, ok)
		if stop && c.Outcome != model.NonEnforcing && c.Outcome != model.NotApplicable {
			// Only evidence of an escape outlives a run that cannot be judged.
			c = CheckResult{Name: c.Name, Outcome: pre, Hint: preHint}
		}
		evidence = evidence || c.Outcome == model.NonEnforcing
		r.Checks[c.Name] = c
		outs = append(outs, c.Outcome)
	}
	if stop && !evidence {
		r.Checks = map[string]CheckResult{}
		r.Outcome, r.Hint = pre, preHint
		return r
	}
	r.Outcome = model.Worst(outs...)
	n := 0
	for _, e := range in.Expect {
		c := r.Checks[e.Check.Name]
		if c.Outcome == model.Correct || c.Outcome == model.NotApplicable || c.Outcome == pre && stop {
			continue
		}
		n++
		// Lead with the first check, in plan order, that shows the most severe outcome.
		if r.Hint == "" && c.Outcome == r.Outcome {
			r.Hint = c.Name + ": " + c.Hint
		}
	}
	if n > 1 {
		r.Hint += fmt.Sprintf(" (+%d more)", n-1)
	}
	if stop {
		r.Hint += "; also: " + preHint
	}
	return r
}

// judgeFS classifies one check from the host side and the probe's report of it.
func judgeFS(e Expect, res probe.FSResult, reported bool) CheckResult {
	c := CheckResult{Name: e.Check.Name, Op: e.Check.Op, Errno: res.Errno}
	switch {
	case e.NotApplicable != "":
		c.Outcome, c.Hint = model.NotApplicable, e.NotApplicable
	case !e.Allow && e.Escaped && e.Next:
		c.Outcome, c.Hint = model.NonEnforcing, fmt.Sprintf("the next session's set-up followed the link %s (to %s) and made its target outside the sandbox", e.Check.Path, e.Check.Path2)
	case !e.Allow && e.Escaped:
		c.Outcome, c.Hint = model.NonEnforcing, fmt.Sprintf("%s %s took effect outside the sandbox", e.Check.Op, e.Check.Path)
	case e.ControlFailed != "":
		c.Outcome, c.Hint = model.HarnessError, e.ControlFailed
	case !reported:
		c.Outcome, c.Hint = model.HarnessError, "check not reported by the probe"
	case e.Next && !res.OK:
		c.Outcome, c.Hint = model.Correct, "nothing planted: "+cmp.Or(res.Errno, res.Err)
	case e.Next && e.NextSession == "":
		c.Outcome, c.Hint = model.HarnessError, "the next session did not run: the link was never met"
	case e.Next:
		c.Outcome, c.Hint = model.Correct, "the next session's set-up did not follow it: "+e.NextSession
	case e.Allow && !res.OK:
		c.Outcome, c.Hint = model.AllowedBlocked, fmt.Sprintf("%s %s refused: %s", e.Check.Op, e.Check.Path, res.Err)
	case e.Allow:
		c.Outcome = model.Correct
	case e.Check.Op == probe.OpRead && res.OK && e.Secret != "" && strings.Contains(res.Data, e.Secret):
		c.Outcome, c.Hint = model.NonEnforcing, "denied secret read: "+e.Check.Path
	case e.Unstaged != "":
		c.Outcome, c.Hint = model.HarnessError, e.Unstaged
	case e.Check.Await != "" && !res.Awaited:
		c.Outcome, c.Hint = model.HarnessError, fmt.Sprintf("%s %s: the probe went on before the host's answer (%s.ack), so the file may not have been there yet", e.Check.Op, e.Check.Path, e.Check.Await)
	case e.Check.Op == probe.OpRead:
		c.Outcome, c.Hint = model.Correct, cmp.Or(res.Errno, "secret hidden")
	case res.OK && e.HostChecked:
		c.Outcome, c.Hint = model.Correct, fmt.Sprintf("contained: %s %s succeeded only inside the sandbox (private mount), the host never saw it", e.Check.Op, e.Check.Path)
	case res.OK && res.Data != "":
		c.Outcome, c.Hint = model.NonEnforcing, fmt.Sprintf("%s %s succeeded: %s", e.Check.Op, e.Check.Path, res.Data)
	case res.OK:
		c.Outcome, c.Hint = model.NonEnforcing, fmt.Sprintf("%s %s succeeded", e.Check.Op, e.Check.Path)
	default:
		c.Outcome, c.Hint = model.Correct, res.Errno
	}
	return c
}
