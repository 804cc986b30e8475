// Package latefiles makes files on the host while a sandboxed command runs, each when the probe
// asks for it (its await mark, probe.FSCheck.Await) and then acks it: a file that appears after
// the sandbox set up what it covers at the start. The host's own record of having made a file is
// the evidence that it was there to be refused; the probe's word is not.
package latefiles

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// File is one file to make when asked.
type File struct {
	Path, Content string
	// Await is the mark whose appearance asks for the file; Await+".ack" answers.
	Await string
	made  atomic.Bool
}

// Made says whether the host made the file in the current run.
func (f *File) Made() bool { return f.made.Load() }

// Missing says why a check of f proves nothing: the host never made it while the command ran
// (the probe did not ask). "" once made, and for no file at all (nil).
func (f *File) Missing() string {
	if f == nil || f.Made() {
		return ""
	}
	return fmt.Sprintf("the host never made %s: the probe did not ask for it (%s) while the command ran, so a refusal to read it proves nothing", f.Path, f.Await)
}

// Stage makes each file when its mark appears, then acks, until the returned stop is called
// (stop waits for the watcher to end). It first forgets what an earlier run made.
func Stage(ctx context.Context, files []*File) (stop func()) {
	pending := make([]*File, 0, len(files))
	for _, f := range files {
		f.made.Store(false)
		pending = append(pending, f)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for len(pending) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			left := pending[:0]
			for _, f := range pending {
				if _, err := os.Stat(f.Await); err != nil || !f.make() {
					left = append(left, f)
				}
			}
			pending = left
		}
	}()
	return func() { cancel(); <-done }
}

// make writes the file and acks it; false if either failed (tried again on the next tick).
func (f *File) make() bool {
	if err := os.WriteFile(f.Path, []byte(f.Content), 0o644); err != nil {
		return false
	}
	f.made.Store(true)
	return os.WriteFile(f.Await+".ack", nil, 0o644) == nil
}
