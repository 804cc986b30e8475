package runsummary

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A verdict's exit code; an interrupt keeps what the run showed so far; a run that stopped early
// is harness trouble only when it had passed so far.
func TestEnd(t *testing.T) {
	stop := errors.New("journal: disk full")
	cases := []struct {
		v           Verdict
		interrupted bool
		stopped     error
		want        Ending
	}{
		{Verdict{Pass, nil}, false, nil, Ending{ExitPass, nil}},
		{Verdict{Fail, []string{"c: fail-open"}}, false, nil, Ending{ExitFail, []string{"c: fail-open"}}},
		{Verdict{Harness, []string{"c: timeouts"}}, false, nil, Ending{ExitHarness, []string{"c: timeouts"}}},
		{Verdict{Fail, []string{"c: fail-open"}}, true, stop, Ending{ExitInterrupted, []string{
			"interrupted; so far: exit 1 (fail-open or failure outside the known findings)", "c: fail-open"}}},
		{Verdict{Pass, nil}, true, nil, Ending{ExitInterrupted, []string{"interrupted; so far: exit 0 (nothing failed outside the known findings)"}}},
		{Verdict{Pass, nil}, false, stop, Ending{ExitHarness, []string{"the run stopped early: journal: disk full"}}},
		{Verdict{Fail, []string{"c: fail-open"}}, false, stop, Ending{ExitFail, []string{"c: fail-open"}}},
	}
	for i, c := range cases {
		got := End(c.v, c.interrupted, c.stopped)
		if got.Code != c.want.Code || !slices.Equal(got.Reasons, c.want.Reasons) {
			t.Errorf("case %d: End = %+v, want %+v", i, got, c.want)
		}
	}
	var b strings.Builder
	WriteEnding(&b, Ending{ExitPass, nil})
	WriteEnding(&b, Ending{ExitFail, []string{"a", "b"}})
	if want := "exit 0: nothing failed outside the known findings (they are still failures: the gate passes one only if its policy accepts it by id)\nexit 1: a\nexit 1: b\n"; b.String() != want {
		t.Errorf("WriteEnding:\n%s\nwant:\n%s", b.String(), want)
	}
}
