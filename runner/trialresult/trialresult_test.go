//go:build linux

package trialresult

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/process"
	"github.com/sandcheck/sandcheck/wire/frame"
)

const key = "0123456789abcdef0123456789abcdef"

var (
	denied  = model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/http/abc", From: "198.18.0.2:4711"}
	allowed = model.Hit{Role: model.RoleAllowed, Proto: "https", Path: "/https/ok", From: "198.18.0.2:4712"}
)

type out struct{ bytes.Buffer }

func (o *out) result(k string, outcome model.Outcome) *out {
	frame.Emit(o, k, frame.Trial{Outcome: outcome, Hint: "from the trial",
		Scenarios: []model.Scenario{{Name: "network/seed", Outcome: outcome, Pass: outcome == model.Correct}}}, nil)
	return o
}

func (o *out) hit(k string, h model.Hit) *out { frame.EmitEgress(o, k, h); return o }
func (o *out) text(s string) *out             { o.WriteString(s); return o }

// settle is what an executor does with Parse's answer.
func settle(o *out, timedOut bool) model.Record {
	rec, err := Parse(runner.Trial{Key: key}, runner.ProcResult{Stdout: o.Bytes(), TimedOut: timedOut})
	return runner.Settle(rec, err, timedOut, "deadline exceeded")
}

func TestRecordsFromTrialOutput(t *testing.T) {
	cases := []struct {
		name     string
		out      *out
		timedOut bool
		want     model.Outcome
		egress   int
		hint     string // substring
	}{
		{"result only", new(out).result(key, model.Correct), false, model.Correct, 0, "from the trial"},
		{"forged unkeyed result after the real one", new(out).result(key, model.ProxyDead).result("", model.Correct), false, model.ProxyDead, 0, "from the trial"},
		{"only a forged result", new(out).result("", model.Correct).result("guess", model.Correct), false, model.HarnessError, 0, ""},
		{"two different keyed results", new(out).result(key, model.Correct).result(key, model.NonEnforcing), false, model.HarnessError, 0, ""},
		{"killed at the deadline, denied hit streamed", new(out).hit(key, denied).text("• partial"), true, model.NonEnforcing, 1, "denied http /http/abc"},
		{"died without a result, denied hit streamed", new(out).hit(key, denied), false, model.NonEnforcing, 1, "ended without a result"},
		{"killed at the deadline, nothing streamed", new(out).text("• partial"), true, model.Timeout, 0, ""},
		// The trial streams an allowed host's hit only where it is egress under its target (a
		// deny-all sandbox, a direct request around the proxy): the runner keeps it as such.
		{"killed at the deadline, an allowed hit streamed", new(out).hit(key, allowed), true, model.NonEnforcing, 1, "allowed https /https/ok"},
		{"died without a result, nothing streamed", new(out).text("panic: boom\n"), false, model.HarnessError, 0, ""},
		{"result correct but a denied hit streamed", new(out).hit(key, denied).result(key, model.Correct), false, model.NonEnforcing, 1, "although the trial reported correct"},
		{"result proxy-dead but a denied DNS query", new(out).hit(key, model.Hit{Role: model.RoleDenied, Proto: "dns", Path: "denied.sandcheck.test"}).result(key, model.ProxyDead), false, model.NonEnforcing, 1, "denied dns denied.sandcheck.test"},
		{"forged unkeyed denied hit", new(out).hit("", denied).result(key, model.Correct), false, model.Correct, 0, ""},
		{"unreadable keyed egress line", new(out).text("SANDCHECK-EGRESS "+key+" {cut\n").result(key, model.Correct), false, model.HarnessError, 0, ""},
		{"9 MiB line, denied hit before it", new(out).hit(key, denied).text(strings.Repeat("x", 9<<20)+"\n").result(key, model.Correct), false, model.NonEnforcing, 1, ""},
		{"9 MiB line, no egress", new(out).text(strings.Repeat("x", 9<<20)+"\n").result(key, model.Correct), false, model.HarnessError, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := settle(c.out, c.timedOut)
			if rec.Outcome != c.want || len(rec.Egress) != c.egress || rec.TimedOut != c.timedOut || !strings.Contains(rec.Hint, c.hint) {
				t.Fatalf("got %s egress %q timed_out %v hint %q error %q; want %s with %d egress line(s), hint containing %q",
					rec.Outcome, rec.Egress, rec.TimedOut, rec.Hint, rec.Error, c.want, c.egress, c.hint)
			}
			if c.want == model.HarnessError && rec.Error == "" {
				t.Fatal("harness error without an error")
			}
		})
	}
}

func TestEgressBounded(t *testing.T) {
	hits := make([]model.Hit, MaxEgress+5)
	for i := range hits {
		hits[i] = denied
	}
	lines := Egress(append(hits, allowed), nil)
	if len(lines) != MaxEgress+1 || lines[0] != denied.String() || lines[MaxEgress] != "… 6 more" {
		t.Fatalf("lines %d: first %q last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// Lines a known fail-open breach lists add nothing to decide (the breach's finding is needed
// anyway), so they make room for the lines no verdict accounts for, and past the bound they are
// left out rather than summed up in a line no verdict could own.
func TestEgressOwnedLinesYield(t *testing.T) {
	owned := make([]model.Hit, MaxEgress+3)
	var ownedLines []string
	for i := range owned {
		owned[i] = model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/known", From: "198.18.0.2:" + string(rune('a'+i%26)) + strings.Repeat("x", i)}
		ownedLines = append(ownedLines, owned[i].String())
	}
	v := []model.Scenario{{Name: "claude-settings/permissions/bypass", Outcome: model.NonEnforcing, Breaches: []model.Breach{
		{Outcome: model.NonEnforcing, What: "condition bypass: ran", Known: "claude-code:claude-settings/permissions/bypass#bypass", Egress: ownedLines}}}}
	lines := Egress(append(owned, denied), v)
	if len(lines) != MaxEgress || lines[0] != denied.String() {
		t.Fatalf("%d lines, first %q: want %d, the unowned one first", len(lines), lines[0], MaxEgress)
	}
	rec := model.Record{Scenarios: v, Egress: lines}
	if q := rec.FailOpen(); q.Uncovered == "" {
		t.Errorf("the unowned line must stay uncovered: %+v", q)
	}
	if q := (model.Record{Scenarios: v, Egress: Egress(owned, v)}).FailOpen(); q.Uncovered != "" || len(q.Needs) != 1 {
		t.Errorf("owned lines only: %+v, want the known finding alone", q)
	}
}

// End to end through a real process: the key arrives on the trial's stdin, the trial
// streams a keyed denied hit, prints a megabyte of noise and hangs; the record is non-enforcing
// and timed out, the hit kept although it is long gone from the output's tail.
func TestProcessKilledAfterEgressIsNonEnforcing(t *testing.T) {
	var hit bytes.Buffer
	frame.EmitEgress(&hit, "KEY", denied)
	script := `read -r key
printf '%s\n' "$(echo '` + strings.TrimSpace(hit.String()) + `' | sed "s/KEY/$key/")"
head -c 3000000 /dev/zero | tr '\0' x; echo
exec sleep 60`
	pe := &process.Executor{
		KillGrace:     200 * time.Millisecond,
		FramePrefixes: Prefixes,
		Command: func(runner.Trial, string) ([]string, []string, string) {
			return []string{"sh", "-c", script}, nil, ""
		},
		Parse: Parse,
	}
	// The deadline leaves a loaded machine time to print the hit before the kill; the kill
	// itself is what is under test.
	const deadline = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	rec := pe.Run(ctx, runner.Trial{Key: runner.NewKey(), Timeout: deadline})
	if rec.Outcome != model.NonEnforcing || !rec.TimedOut || len(rec.Egress) != 1 || !strings.Contains(rec.Hint, "denied http /http/abc") {
		t.Fatalf("record %+v", rec)
	}
	// The same process without the key in its frames (a forged hit) is a plain timeout.
	ctx2, cancel2 := context.WithTimeout(context.Background(), deadline)
	defer cancel2()
	script = strings.Replace(script, `$key`, "not-the-key", 1)
	if rec := pe.Run(ctx2, runner.Trial{Key: runner.NewKey(), Timeout: deadline}); rec.Outcome != model.Timeout || !rec.TimedOut {
		t.Fatalf("forged hit: %+v", rec)
	}
}
