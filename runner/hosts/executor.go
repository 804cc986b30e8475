package hosts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/journal"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// Executor runs trials on a Host: the runner's Executor for every host but the local one (which
// uses runner.ProcessExecutor for its leftover tracking).
type Executor struct {
	Host   Host
	Binary string // sandcheck on the host, from Prepare
	// Argv builds the trial's command line for the host's binary.
	Argv func(t runner.Trial, bin string) []string
	// Parse turns the trial's stdout into a record.
	Parse func(stdout []byte) (journal.Record, error)
}

// Run implements runner.Executor.
func (e *Executor) Run(ctx context.Context, t runner.Trial) journal.Record {
	start := time.Now()
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	res := e.Host.Exec(ctx, e.Argv(t, e.Binary), timeout)
	rec := journal.Record{Start: start, Isolation: e.Host.Isolation()}
	switch {
	case res.Err != nil:
		rec.Outcome, rec.Error = classify.HarnessError, fmt.Sprintf("host %s: %v", e.Host.Name(), res.Err)
	case res.TimedOut:
		rec.Outcome, rec.Error = classify.Timeout, fmt.Sprintf("deadline %s exceeded on host %s; trial killed", timeout, e.Host.Name())
	default:
		r, err := e.Parse(res.Stdout)
		if err != nil {
			rec.Outcome = classify.HarnessError
			rec.Error = fmt.Sprintf("host %s: %v (exit %d, stderr: %s)", e.Host.Name(), err, res.Exit, tail(res.Stderr, 400))
			break
		}
		r.Start, r.Isolation = start, e.Host.Isolation()
		rec = r
	}
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
