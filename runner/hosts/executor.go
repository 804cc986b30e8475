package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
)

// Trials says how the trials of a prepared host run.
type Trials struct {
	Binary string // sandcheck on the host, from Prepare
	// Argv builds a trial's command line for the host's binary.
	Argv func(t runner.Trial, bin string) []string
	// Parse turns what the trial left behind (its stdout above all) into a record; it is
	// called even after a deadline or a lost host, since the output up to then may hold
	// evidence (see runner.Settle).
	Parse func(t runner.Trial, res runner.ProcResult) (model.Record, error)
	// Frames are the prefixes of the stdout lines kept whole however much a trial prints
	// (runner.FrameKeeper, told the trial's key).
	Frames []string
}

// NewExecutor returns the runner's Executor for trials on h: the host's own (Direct), or one
// that runs each trial through h's Exec.
func NewExecutor(h Host, tr Trials) (runner.Executor, error) {
	switch h := h.(type) {
	case Direct:
		return h.Executor(tr), nil
	case Execer:
		return &execExecutor{host: h, tr: tr}, nil
	}
	return nil, fmt.Errorf("host %s: %T runs no trials (neither Exec nor Executor)", h.Name(), h)
}

// execExecutor runs trials through a host's Exec.
type execExecutor struct {
	host Execer
	tr   Trials
}

// Run implements runner.Executor.
func (e *execExecutor) Run(ctx context.Context, t runner.Trial) model.Record {
	start := time.Now()
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	argv := e.tr.Argv(t, e.tr.Binary)
	stdin, env := runner.KeyInput(t.Key)
	c := Command{Argv: WithEnv(argv, env...), Stdin: stdin}
	var frames *runner.FrameKeeper
	if len(e.tr.Frames) > 0 {
		frames = runner.NewFrameKeeper(e.tr.Frames, t.Key, runner.MaxFrames)
		c.Stdout = frames
	}
	res := e.host.Exec(ctx, c, timeout)
	pr := runner.ProcResult{Argv: argv, ExitCode: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr,
		TimedOut: res.TimedOut, Duration: res.Duration}
	if frames != nil {
		pr.Frames, pr.FramesLost, pr.Truncated = frames.Bytes(), frames.Lost(), frames.Capped()
	}
	rec, perr := e.tr.Parse(t, pr)
	if pr.FramesLost {
		perr = errors.Join(perr, runner.LostError(runner.MaxFrames))
	}
	if perr != nil {
		perr = fmt.Errorf("host %s: %w (exit %d, stderr: %s)", e.host.Name(), perr, res.Exit, Tail(res.Stderr, 400))
	}
	if res.Err != nil {
		// The host lost the trial: a harness error, unless its output already shows a fail-open.
		rec = runner.Settle(rec, fmt.Errorf("host %s: %w", e.host.Name(), res.Err), false, "")
		rec.TimedOut = rec.TimedOut || res.TimedOut
	} else {
		rec = runner.Settle(rec, perr, res.TimedOut, fmt.Sprintf("deadline %s exceeded on host %s; trial killed", timeout, e.host.Name()))
	}
	rec.Start, rec.Isolation = start, e.host.Isolation()
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec
}

// WithEnv prefixes argv with `env K=V ...`, the one way to give a trial variables that every
// host kind runs alike (each passes argv through as it is; env(1) is in every image we run).
// The values may stay in the command line of a process waiting for the trial (a wrapper, a
// session leader) and are in the trial's environment: nothing secret goes here (see
// Command.Stdin).
func WithEnv(argv []string, kv ...string) []string {
	if len(kv) == 0 {
		return argv
	}
	return append(append([]string{"env"}, kv...), argv...)
}

// Tail is the end of a command's output, trimmed to about n bytes, for messages.
func Tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
