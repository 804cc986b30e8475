package limits

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
	probelimits "github.com/sandcheck/sandcheck/suites/probe/limits"
)

var bounds = Bounds{Tasks: 256, MemoryMiB: 768, TmpfsMiB: 128, Spec: probelimits.Spec{Processes: 512, MemoryMiB: 1024, DiskMiB: 256}}

func ran(r *probelimits.Result, c Counters) Input {
	return Input{Session: classify.Session{Ran: true, Obs: &probe.Observation{Limits: r}}, Bounds: bounds, Counters: c}
}

// The host's counters decide which bound stopped the command: a refusal or a kill the trial's
// control group counted is its own, one it did not count is the sandbox's; a disk filled to the
// trial's tmpfs is the trial's bound, a file size error the sandbox's.
func TestClassifyNamesTheBound(t *testing.T) {
	unlimited := &probelimits.Result{Processes: 231, ProcessEnd: "EAGAIN", MemoryMiB: 616, MemoryEnd: "killed by SIGKILL", DiskMiB: 127, DiskEnd: "ENOSPC"}
	limited := &probelimits.Result{Processes: 40, ProcessEnd: "EAGAIN", MemoryMiB: 144, MemoryEnd: "mmap: ENOMEM", DiskMiB: 16, DiskEnd: "EFBIG"}
	for _, c := range []struct {
		name    string
		in      Input
		limited bool
		hint    string
	}{
		{"unlimited", ran(unlimited, Counters{TasksRefused: 3, OOMKills: 1}), false, "the trial's"},
		{"limited", ran(limited, Counters{}), true, "limited by the sandbox"},
	} {
		got := Classify(c.in)
		for _, m := range []string{Processes, Memory, Disk} {
			g := got[m]
			if g.Outcome != model.Correct || g.Limited != c.limited || !strings.Contains(g.Hint, c.hint) {
				t.Errorf("%s %s: %+v, want information, limited=%v, %q", c.name, m, g, c.limited, c.hint)
			}
		}
	}
	// Reaching every cap is not limited either.
	capped := &probelimits.Result{Processes: 512, ProcessEnd: probelimits.Cap, MemoryMiB: 1024, MemoryEnd: probelimits.Cap, DiskMiB: 256, DiskEnd: probelimits.Cap}
	for m, g := range Classify(ran(capped, Counters{})) {
		if g.Outcome != model.Correct || g.Limited || !strings.Contains(g.Hint, "cap") {
			t.Errorf("capped %s: %+v", m, g)
		}
	}
}

// Missing evidence is never information: no report, no measurement, unreadable counters, an
// end the classifier cannot place, a sandbox that did not start.
func TestClassifyMissingEvidence(t *testing.T) {
	some := &probelimits.Result{Processes: 9, ProcessEnd: "EPERM", MemoryMiB: 8, MemoryEnd: "start the memory child: EACCES", DiskMiB: 0, DiskEnd: "open: EROFS"}
	for _, c := range []struct {
		name string
		in   Input
		want map[string]model.Outcome
	}{
		{"no report", Input{Session: classify.Session{Ran: true}, Bounds: bounds}, all(model.HarnessError)},
		{"no measurement", ran(nil, Counters{}), all(model.HarnessError)},
		{"counters unreadable", ran(&probelimits.Result{DiskMiB: 256, DiskEnd: probelimits.Cap}, Counters{Err: errors.New("gone")}),
			map[string]model.Outcome{Processes: model.HarnessError, Memory: model.HarnessError, Disk: model.Correct}},
		{"unplaced ends", ran(some, Counters{}), all(model.HarnessError)},
		{"sandbox refused", Input{Session: classify.Session{Exit: 1, Stderr: "srt: bwrap not found"}, Bounds: bounds}, all(model.SandboxFailed)},
		{"timed out", Input{Session: classify.Session{TimedOut: true}, Bounds: bounds}, all(model.Timeout)},
	} {
		got := Classify(c.in)
		for m, want := range c.want {
			if got[m].Outcome != want {
				t.Errorf("%s %s: %+v, want %s", c.name, m, got[m], want)
			}
		}
	}
}

func all(o model.Outcome) map[string]model.Outcome {
	return map[string]model.Outcome{Processes: o, Memory: o, Disk: o}
}
