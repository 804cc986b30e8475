//go:build linux

package hosts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/journal"
	"github.com/sandcheck/sandcheck/suites/classify"
)

func TestLocalExecAndTimeoutKillsGroup(t *testing.T) {
	h, err := New(matrix.Host{Name: "here", Kind: matrix.KindLocal})
	if err != nil || h.Name() != "here" {
		t.Fatalf("New: %v %v", h, err)
	}
	r := h.Exec(context.Background(), []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, 5*time.Second)
	if r.Exit != 3 || strings.TrimSpace(string(r.Stdout)) != "out" || strings.TrimSpace(string(r.Stderr)) != "err" || r.TimedOut {
		t.Fatalf("exec: %+v", r)
	}
	// A grandchild holding the output open must die with the group on the deadline.
	start := time.Now()
	r = h.Exec(context.Background(), []string{"sh", "-c", "sleep 100 & sleep 100"}, 200*time.Millisecond)
	if !r.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %+v after %s", r, time.Since(start))
	}
}

func TestExecutorMapsHostResults(t *testing.T) {
	e := &Executor{Host: NewLocal(""), Binary: "sh",
		Argv: func(t runner.Trial, bin string) []string { return []string{bin, "-c", t.Cell.Labels} },
		Parse: func(_ runner.Trial, res runner.ProcResult) (journal.Record, error) {
			return journal.Record{Outcome: classify.Outcome(strings.TrimSpace(string(res.Stdout)))}, nil
		}}
	run := func(script string, timeout time.Duration) journal.Record {
		return e.Run(context.Background(), runner.Trial{Cell: journal.Cell{Labels: script}, Timeout: timeout})
	}
	if r := run("echo correct", time.Second); r.Outcome != classify.Correct || r.Isolation == "" {
		t.Fatalf("pass-through: %+v", r)
	}
	if r := run("sleep 5", 100*time.Millisecond); r.Outcome != classify.Timeout {
		t.Fatalf("timeout: %+v", r)
	}
}

// The trial's key reaches the trial process as its environment (not its arguments), on a host
// as through the local executor, and what parse finds past a deadline is kept when it is a
// fail-open.
func TestExecutorPassesKeyAndKeepsFailOpenPastDeadline(t *testing.T) {
	var seen runner.ProcResult
	e := &Executor{Host: NewLocal(""), Binary: "sh",
		Argv: func(t runner.Trial, bin string) []string { return []string{bin, "-c", t.Cell.Labels} },
		Parse: func(_ runner.Trial, res runner.ProcResult) (journal.Record, error) {
			seen = res
			if strings.Contains(string(res.Stdout), "egress") {
				return journal.Record{Outcome: classify.NonEnforcing, Egress: []string{"denied http /x"}}, nil
			}
			return journal.Record{Outcome: classify.Correct, Hint: strings.TrimSpace(string(res.Stdout))}, nil
		}}
	tr := runner.Trial{Cell: journal.Cell{Labels: `echo "$` + runner.EnvResultKey + `"`}, Timeout: 5 * time.Second, Key: "k123"}
	if r := e.Run(context.Background(), tr); r.Hint != "k123" || strings.Contains(strings.Join(seen.Argv, " "), "k123") {
		t.Fatalf("key: record %+v, argv %q", r, seen.Argv)
	}
	tr.Cell.Labels, tr.Timeout = "echo egress; sleep 5", 300*time.Millisecond
	r := e.Run(context.Background(), tr)
	if r.Outcome != classify.NonEnforcing || !r.TimedOut || len(r.Egress) != 1 || !strings.Contains(r.Error, "deadline") {
		t.Fatalf("egress then deadline: %+v", r)
	}
	tr.Cell.Labels = "sleep 5"
	if r := e.Run(context.Background(), tr); r.Outcome != classify.Timeout || !r.TimedOut {
		t.Fatalf("deadline without evidence: %+v", r)
	}
}

func TestUnknownKindNamesAvailable(t *testing.T) {
	_, err := New(matrix.Host{Name: "x", Kind: "teleport"})
	if err == nil || !strings.Contains(err.Error(), "local") {
		t.Fatalf("err = %v", err)
	}
}
