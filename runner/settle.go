package runner

// A finished trial process, and settling its record: the rules every executor applies to what
// its parser made of it.

import (
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// ProcResult is what a trial process left behind, handed to the parser of the executor that ran
// it (process.Executor.Parse, hosts.Executor.Parse).
type ProcResult struct {
	Argv      []string
	ExitCode  int // -1 when a signal ended it
	Stdout    []byte
	Stderr    []byte
	Truncated bool // output beyond MaxOutput was dropped (the last MaxOutput bytes are kept)
	// Frames holds, in order, the whole stdout lines that start with one of the executor's
	// FramePrefixes (the trial's own frames, and within a budget of their own the lines that only
	// look like frames: see FrameKeeper), however much other output there was.
	Frames []byte
	// FramesLost: frames carrying the trial's key were dropped past the executor's cap
	// (FrameKeeper.Lost), so Frames lacks evidence; the executor must not let the record pass.
	FramesLost bool
	Scratch    string // the trial's scratch directory; removed after Parse returns
	TimedOut   bool   // the deadline expired and the group was killed; the record becomes timeout
	Duration   time.Duration
}

// Settle applies the runner's rules to what a parser made of a finished trial process. A trial
// killed at its deadline (timedOut) is a timeout, and output the parser could not read
// (parseErr) a harness error; but neither overrides a record the parser found non-enforcing:
// evidence that traffic or data escaped is kept whatever else went wrong, with TimedOut still
// set. deadline explains the kill ("deadline 20s exceeded; ...").
func Settle(rec model.Record, parseErr error, timedOut bool, deadline string) model.Record {
	rec.TimedOut = rec.TimedOut || timedOut
	var why []string
	if timedOut {
		why = append(why, deadline)
	}
	if parseErr != nil {
		why = append(why, parseErr.Error())
	}
	if rec.Error != "" {
		why = append(why, rec.Error)
	}
	if rec.Outcome == model.NonEnforcing {
		if len(why) > 0 {
			rec.Error = strings.Join(why, "; ")
		}
		return rec
	}
	switch {
	case timedOut:
		rec.Outcome = model.Timeout
		rec.Error = strings.Join(why, "; ")
	case parseErr != nil:
		rec.Outcome = model.HarnessError
		rec.Error = strings.Join(why, "; ")
	}
	return rec
}
