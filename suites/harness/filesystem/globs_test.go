//go:build linux

package filesystem

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/suites/harness/fsplan"
)

// TestLateFilesMadeOnlyWhenAsked: the host makes a late check's file when the probe's await mark
// appears, and acks it; a check whose mark never came stays unstaged, which judge turns into
// harness trouble: a refusal to read a file that was never there proves nothing.
func TestLateFilesMadeOnlyWhenAsked(t *testing.T) {
	l := newFSInterplay(t.TempDir())
	if err := l.layout("tok"); err != nil {
		t.Fatal(err)
	}
	var plans []fsplan.Plan
	var asked, never fsplan.Plan
	for _, c := range l.globChecks("tok") {
		plans = append(plans, c.plan)
		switch c.Name {
		case "late":
			asked = c.plan
		case "late-in-denied-dir":
			never = c.plan
		}
	}
	if asked.Late == nil || never.Late == nil {
		t.Fatalf("the late checks have no late file: %+v %+v", asked, never)
	}
	stop := stageLate(context.Background(), plans)
	defer func() { stop() }()
	if _, err := os.Stat(asked.Late.Path); !os.IsNotExist(err) {
		t.Fatalf("%s exists before the probe asked: %v", asked.Late.Path, err)
	}
	if err := os.WriteFile(asked.Check.Await, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(asked.Check.Await + ".ack"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ack within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b, err := os.ReadFile(asked.Late.Path); err != nil || !strings.Contains(string(b), "sandcheck-canary tok") {
		t.Fatalf("late file: %q, %v", b, err)
	}
	if why := asked.Late.Missing(); why != "" {
		t.Errorf("the asked-for file counts as unstaged: %s", why)
	}
	if why := never.Late.Missing(); !strings.Contains(why, "the host never made") {
		t.Errorf("a file never asked for: unstaged = %q", why)
	}
	// A second run starts from nothing made.
	stop()
	stop = stageLate(context.Background(), plans)
	if why := asked.Late.Missing(); why == "" {
		t.Error("a new run still counts the last run's file as made")
	}
}
