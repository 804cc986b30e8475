//go:build linux

package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
)

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

// The trial's configuration is handed to the specs as it was built, typed: what Use was given is
// what Current returns, and a configuration that does not check is refused.
func TestUseHandsTheConfigurationDown(t *testing.T) {
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	c.Target, c.Fault, c.TargetSettings, c.Strict, c.Sessions = "command", "bridge-absent", `{"argv":["sh","-c","{{.Command}}"]}`, true, 7
	if err := Use(c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { current.Lock(); current.set = false; current.Unlock() })
	got, err := Current()
	if err != nil || got.Target != "command" || got.Fault != "bridge-absent" || !got.Strict || got.Sessions != 7 || got.TargetSettings != c.TargetSettings {
		t.Fatalf("Current = %+v, %v", got, err)
	}
	bad := c
	bad.Hostnames = "dns"
	if err := Use(bad); err == nil {
		t.Fatal("a configuration that does not check was taken")
	}
}
