package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

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
