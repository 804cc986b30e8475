// Package trialresult is the runner's reading of a trial process's output: the result line and
// the egress lines it streamed (framed with the trial's key, see wire/frame), into a journal
// record. Egress evidence comes first: a streamed hit (the trial streams only the hits that are
// egress under its target, classify.Egress) makes the record non-enforcing, whatever the result
// line says or whether there is one.
package trialresult

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// Prefixes are the lines a process.Executor should keep whole (FramePrefixes).
var Prefixes = []string{frame.ResultPrefix, frame.EgressPrefix}

// MaxEgress bounds Record.Egress; further hits are summed up in one last line.
const MaxEgress = 64

// Parse reads a finished trial process; it fits process.Executor.Parse and
// hosts.Executor.Parse. Errors are for runner.Settle: with fail-open evidence the record is
// non-enforcing and the error is nil (what went wrong besides is in Record.Error).
func Parse(t runner.Trial, res runner.ProcResult) (model.Record, error) {
	out := res.Stdout
	if res.Frames != nil {
		out = res.Frames
	}
	return Record(out, t.Key, res.TimedOut)
}

// Record reads output keyed key; timedOut says the trial was killed at its deadline (for the
// hint).
func Record(out []byte, key string, timedOut bool) (model.Record, error) {
	hits, egressErr := frame.ParseEgress(out, key)
	t, fp, resultErr := frame.Parse(out, key)
	var rec model.Record
	if resultErr == nil {
		rec = model.Record{Outcome: t.Outcome, Hint: t.Hint, Scenarios: t.Scenarios, Evidence: t.Evidence, HostFP: fp, PhasesMS: t.PhasesMS, Families: t.Families}
	}
	rec.Egress = Egress(hits, rec.Scenarios)
	if len(rec.Egress) == 0 {
		if resultErr != nil {
			return rec, resultErr
		}
		if egressErr != nil {
			// An unreadable egress line could be a denied hit: no pass on that.
			return rec, fmt.Errorf("egress lines: %w", egressErr)
		}
		return rec, nil
	}
	if rec.Outcome != model.NonEnforcing {
		var despite string
		switch {
		case timedOut:
			despite = "before the trial was killed at its deadline"
		case resultErr != nil:
			despite = "although the trial ended without a result"
		default:
			despite = fmt.Sprintf("although the trial reported %s", rec.Outcome)
		}
		more := ""
		if n := len(rec.Egress); n > 1 {
			more = fmt.Sprintf(" (and %d more)", n-1)
		}
		rec.Hint = fmt.Sprintf("a fixture server logged %s%s %s", rec.Egress[0], more, despite)
		rec.Outcome = model.NonEnforcing
	}
	if err := errors.Join(resultErr, egressErr); err != nil {
		rec.Error = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return rec, nil
}

// Egress describes the streamed hits, one line each in the hit's own terms ("denied http GET /x
// on denied.sandcheck.test:80 from 198.18.0.1:4242"). Every streamed hit is egress: the trial
// decided so under its target (an allowed host's hit too, where the target denies all network
// or the request went around the proxy). Lines no verdict accounts for come first, at most
// MaxEgress of them; past that they are summed up in one line, which no verdict accounts for
// either (a flood is fail-open). Lines a fail-open breach of a failed verdict lists fill what
// room is left: past it they are left out, since that breach's finding is needed anyway
// (model.Record.FailOpen), and the trial's evidence keeps them.
func Egress(hits []model.Hit, verdicts []model.Scenario) []string {
	all := make([]string, len(hits))
	for i, h := range hits {
		all[i] = h.String()
	}
	unowned := map[string]bool{}
	for _, l := range (model.Record{Scenarios: verdicts, Egress: all}).UnownedEgress() {
		unowned[l] = true
	}
	var lines, owned []string
	extra := 0
	for _, l := range all {
		switch {
		case !unowned[l]:
			owned = append(owned, l)
		case len(lines) < MaxEgress:
			lines = append(lines, l)
		default:
			extra++
		}
	}
	if extra > 0 {
		return append(lines, fmt.Sprintf("… %d more", extra))
	}
	return append(lines, owned[:min(MaxEgress-len(lines), len(owned))]...)
}
