//go:build linux

package harness

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The probe is this test binary when a recording (record_test.go) runs it inside a sandbox.
func TestMain(m *testing.M) {
	probe.MaybeRun()
	os.Exit(m.Run())
}

func TestTrialBudget(t *testing.T) {
	t.Cleanup(config.With(func(e *config.Env) { e.TrialBudget = "20s" }))
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if want := phases.ProcessStart().Add(20 * time.Second); !c.Deadline.Equal(want) {
		t.Fatalf("Deadline = %v, want process start + 20s = %v", c.Deadline, want)
	}
	c.Timeout = time.Hour
	if d := c.RunTimeout(); d > 20*time.Second-BudgetReserve || d <= 0 {
		t.Fatalf("RunTimeout = %v, want what is left of 20s less %v", d, BudgetReserve)
	}
	c.Timeout = time.Second
	if d := c.RunTimeout(); d != time.Second {
		t.Fatalf("RunTimeout = %v, want the shorter Timeout", d)
	}
	c.Deadline = time.Now().Add(BudgetReserve / 2)
	if d := c.RunTimeout(); d > 0 {
		t.Fatalf("RunTimeout = %v with the budget spent, want <= 0", d)
	}
	if r := proc.RunCommand(t.Context(), []string{"true"}, nil, "", "", c.RunTimeout(), c.KillGrace()); !r.TimedOut {
		t.Fatalf("a run with no budget left was started: %+v", r)
	}
	if g := c.KillGrace(); g > BudgetReserve/2 {
		t.Fatalf("KillGrace = %v under a budget, want at most half the reserve", g)
	}
	c.Deadline = time.Time{}
	if d := c.RunTimeout(); d != time.Second {
		t.Fatalf("RunTimeout = %v without a budget, want Timeout", d)
	}
	for _, bad := range []string{"soon", "-1s", "0"} {
		t.Cleanup(config.With(func(e *config.Env) { e.TrialBudget = bad }))
		if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvBudget) {
			t.Errorf("%s=%q: err = %v", EnvBudget, bad, err)
		}
	}
}

// Each session of a concurrent trial gets its own requests, the connections that carried them,
// and whatever no session's nonce claims; never another session's requests.
func TestSessionHits(t *testing.T) {
	hits := []nethost.Hit{
		{Role: "allowed", Proto: "tcp", From: "a:1"}, {Role: "allowed", Proto: "http", Path: "/http/n1", From: "a:1"},
		{Role: "allowed", Proto: "tcp", From: "a:2"}, {Role: "allowed", Proto: "http", Path: "/http/n2", From: "a:2"},
		{Role: "denied", Proto: "dns", Path: "q-n2.denied.sandcheck.test", From: "a:3"},
		{Role: "denied", Proto: "tcp", From: "a:4"}, // accepted, then silent: nobody's
	}
	var got []string
	for _, h := range sessionHits(hits, "n1", []string{"n1", "n2"}) {
		got = append(got, h.Proto+h.Path+"@"+h.From)
	}
	if want := "tcp@a:1 http/http/n1@a:1 tcp@a:4"; strings.Join(got, " ") != want {
		t.Fatalf("session n1 hits = %q, want %q", strings.Join(got, " "), want)
	}
}
