package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

func TestFrameKeeperKeepsWholeFramesAcrossWrites(t *testing.T) {
	k := newFrameKeeper([]string{"RES ", "EGR "}, 1<<20)
	// Prefixes split over writes, a line that starts like a prefix but is not one, a frame
	// without its end.
	for _, w := range []string{"noise\nRE", "S {\"a\":1}\nRESULT no\nE", "G", "R x", "y\nEGO\n", "\nEGR tail"} {
		k.Write([]byte(w))
	}
	if got, want := string(k.bytes()), "RES {\"a\":1}\nEGR xy\nEGR tail\n"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
	// Over the cap a frame is dropped whole, and a later one that fits is still kept.
	k = newFrameKeeper([]string{"F "}, 10)
	k.Write([]byte("F 1\nF 0123456789\nF 2\n"))
	if got := string(k.bytes()); got != "F 1\nF 2\n" || !k.dropped {
		t.Fatalf("kept %q dropped %v", got, k.dropped)
	}
}

func TestTrialBudget(t *testing.T) {
	for _, c := range []struct{ timeout, want time.Duration }{
		{5 * time.Minute, 270 * time.Second}, // a tenth in reserve
		{20 * time.Second, 18 * time.Second}, // at least 2 s
		{8 * time.Second, 6 * time.Second},
		{2500 * time.Millisecond, time.Second}, // never below a second
		{time.Second, 500 * time.Millisecond},  // nor above half of a tiny timeout
	} {
		if got := TrialBudget(c.timeout); got != c.want {
			t.Errorf("TrialBudget(%s) = %s, want %s", c.timeout, got, c.want)
		}
	}
	if a, b := NewKey(), NewKey(); len(a) != 32 || a == b {
		t.Fatalf("keys %q %q", a, b)
	}
}

func TestSettleNeverHidesFailOpen(t *testing.T) {
	open := model.Record{Outcome: model.NonEnforcing, Egress: []string{"denied http /x"}}
	if r := Settle(open, errors.New("no result"), true, "deadline 1s exceeded"); r.Outcome != model.NonEnforcing || !r.TimedOut ||
		!strings.Contains(r.Error, "deadline 1s exceeded") || !strings.Contains(r.Error, "no result") {
		t.Fatalf("fail-open past the deadline: %+v", r)
	}
	ok := model.Record{Outcome: model.Correct}
	if r := Settle(ok, nil, true, "deadline 1s exceeded"); r.Outcome != model.Timeout || !r.TimedOut {
		t.Fatalf("correct past the deadline: %+v", r)
	}
	if r := Settle(ok, errors.New("two results"), false, ""); r.Outcome != model.HarnessError || r.Error != "two results" {
		t.Fatalf("unreadable output: %+v", r)
	}
	if r := Settle(ok, nil, false, ""); r.Outcome != model.Correct || r.TimedOut || r.Error != "" {
		t.Fatalf("clean: %+v", r)
	}
}
