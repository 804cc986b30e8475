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
		Parse: func(stdout []byte) (journal.Record, error) {
			return journal.Record{Outcome: classify.Outcome(strings.TrimSpace(string(stdout)))}, nil
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

func TestUnknownKindNamesAvailable(t *testing.T) {
	_, err := New(matrix.Host{Name: "x", Kind: "teleport"})
	if err == nil || !strings.Contains(err.Error(), "local") {
		t.Fatalf("err = %v", err)
	}
}
