package hosts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/journal"
)

// Executor runs trials on a Host: the runner's Executor for every host but the local one (which
// uses runner.ProcessExecutor for its leftover tracking).
type Executor struct {
	Host   Host
	Binary string // sandcheck on the host, from Prepare
	// Argv builds the trial's command line for the host's binary.
	Argv func(t runner.Trial, bin string) []string
	// Parse turns what the trial left behind (its stdout above all) into a record; it is
	// called even after a deadline or a lost host, since the output up to then may hold
	// evidence (see runner.Settle).
	Parse func(t runner.Trial, res runner.ProcResult) (journal.Record, error)
}

// Run implements runner.Executor.
func (e *Executor) Run(ctx context.Context, t runner.Trial) journal.Record {
	start := time.Now()
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	argv := e.Argv(t, e.Binary)
	res := e.Host.Exec(ctx, WithEnv(argv, keyEnv(t)...), timeout)
	pr := runner.ProcResult{Argv: argv, ExitCode: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr,
		TimedOut: res.TimedOut, Duration: res.Duration}
	rec, perr := e.Parse(t, pr)
	if perr != nil {
		perr = fmt.Errorf("host %s: %w (exit %d, stderr: %s)", e.Host.Name(), perr, res.Exit, tail(res.Stderr, 400))
	}
	if res.Err != nil {
		// The host lost the trial: a harness error, unless its output already shows a fail-open.
		rec = runner.Settle(rec, fmt.Errorf("host %s: %w", e.Host.Name(), res.Err), false, "")
		rec.TimedOut = rec.TimedOut || res.TimedOut
	} else {
		rec = runner.Settle(rec, perr, res.TimedOut, fmt.Sprintf("deadline %s exceeded on host %s; trial killed", timeout, e.Host.Name()))
	}
	rec.Start, rec.Isolation = start, e.Host.Isolation()
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec
}

// keyEnv is the trial's key as environment, when it has one.
func keyEnv(t runner.Trial) []string {
	if t.Key == "" {
		return nil
	}
	return []string{runner.EnvResultKey + "=" + t.Key}
}

// WithEnv prefixes argv with `env K=V ...`, the one way to give a trial variables that every
// host kind runs alike (each passes argv through as it is; env(1) is in every image we run).
// The values then appear in no process's command line for longer than env takes to exec.
func WithEnv(argv []string, kv ...string) []string {
	if len(kv) == 0 {
		return argv
	}
	return append(append([]string{"env"}, kv...), argv...)
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
