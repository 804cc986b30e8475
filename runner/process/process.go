// Package process runs each trial as a child process in a process group of its own, which the
// trial's deadline kills whole; it keeps the tail of the trial's output and its protocol lines
// (frames) whole, and can start the next trial's process ahead of it (a spare).
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
)

// Executor runs each trial as a child process in a process group of its own, so that on
// expiry of the deadline the whole group (the sandbox, its helpers, the probes) can be signalled:
// SIGTERM, then SIGKILL after KillGrace. Stragglers are SIGKILLed even when the leader exits
// normally, so no process outlives its trial.
type Executor struct {
	// Command builds the process of a trial; scratch is a fresh directory for it (e.g. for a
	// Ginkgo JSON report). A nil env inherits the runner's environment.
	Command func(t runner.Trial, scratch string) (argv, env []string, dir string)
	// Parse turns the finished process into a Record. Nil: exit 0 is correct, anything else a
	// harness error (enough for fakes). A Parse error becomes a harness-error record.
	Parse func(t runner.Trial, res runner.ProcResult) (model.Record, error)
	// ScratchRoot is the parent of scratch dirs. Default: <run dir>/scratch (runner.Run clears
	// it at start, so a kill -9 leaves nothing behind for long), or os.TempDir() outside Run. Set
	// a short path if trials put unix sockets there (108-byte limit).
	ScratchRoot string
	KillGrace   time.Duration // SIGTERM to SIGKILL; default 5s
	MaxOutput   int           // bytes kept of stdout and of stderr each; default 1 MiB
	// Spare, when set, is the command line of a process started ahead of each trial, which
	// waits for its trial on stdin (SpareRequest) and then runs it: the process's own start
	// (exec, runtime and package initialisation: a sandcheck trial's ~20 ms) overlaps the trial
	// before it. A spare serves any trial whose command starts Spare[0] in the runner's
	// environment and directory; others start as usual. Close stops the spare left over.
	Spare   []string
	spareMu sync.Mutex
	spares  []*proc
	closed  bool
	// FramePrefixes: stdout lines starting with one of these are also kept whole in
	// runner.ProcResult.Frames (runner.FrameKeeper, told the trial's key), so a trial's result
	// and egress lines survive however much it, or the command it sandboxes, printed around them.
	FramePrefixes []string
	// MaxFrames bounds the trial's own frames kept (default 64 MiB); frames lost past it make
	// the record a harness error unless it is non-enforcing.
	MaxFrames int
}

// Run implements runner.Executor.
func (e *Executor) Run(ctx context.Context, t runner.Trial) model.Record {
	start := time.Now()
	fail := func(format string, args ...any) model.Record {
		return model.Record{Outcome: model.HarnessError, Error: fmt.Sprintf(format, args...),
			Start: start, DurationMS: time.Since(start).Milliseconds()}
	}
	root := e.ScratchRoot
	switch {
	case root != "":
	case t.Dir != "":
		root = filepath.Join(t.Dir, runner.ScratchDir)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return fail("scratch dir: %v", err)
		}
	default:
		root = os.TempDir()
	}
	scratch, err := os.MkdirTemp(root, "trial-")
	if err != nil {
		return fail("scratch dir: %v", err)
	}
	defer os.RemoveAll(scratch)

	argv, env, dir := e.Command(t, scratch)
	if len(argv) == 0 {
		return fail("no command for trial %s/%d", t.Cell.ID, t.Index)
	}
	res, err := e.runProcess(ctx, t, argv, env, dir)
	res.Scratch = scratch
	if err != nil {
		return fail("%v", err)
	}
	if ctx.Err() != nil && !res.TimedOut {
		// Cancelled (Ctrl-C), not timed out: Run drops this record and a resume reruns the trial.
		return fail("interrupted")
	}

	parse := e.Parse
	if parse == nil {
		parse = exitCodeParse
	}
	rec, perr := parse(t, res)
	if res.FramesLost {
		perr = errors.Join(perr, runner.LostError(e.maxFrames()))
	}
	if perr != nil {
		perr = fmt.Errorf("parse trial output: %w (exit %d, stderr: %s)", perr, res.ExitCode, tail(res.Stderr, 400))
	}
	rec = runner.Settle(rec, perr, res.TimedOut, fmt.Sprintf("deadline %s exceeded; process group killed", t.Timeout))
	if rec.Start.IsZero() {
		rec.Start = start
	}
	if rec.DurationMS == 0 {
		rec.DurationMS = res.Duration.Milliseconds()
	}
	return rec
}

func (e *Executor) runProcess(ctx context.Context, t runner.Trial, argv, env []string, dir string) (runner.ProcResult, error) {
	res := runner.ProcResult{Argv: argv, ExitCode: -1}
	maxOut := e.MaxOutput
	if maxOut <= 0 {
		maxOut = 1 << 20
	}
	grace := e.KillGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}

	begin := time.Now()
	p, err := e.start(argv, env, dir, t.Key)
	if err != nil {
		return res, err
	}
	cmd, outR, errR := p.cmd, p.outR, p.errR
	pgid := cmd.Process.Pid
	if t.Procs != nil {
		t.Procs.Started(pgid)
		defer t.Procs.Exited(pgid)
	}

	var stdout, stderr tailBuffer
	stdout.max, stderr.max = maxOut, maxOut
	var sink io.Writer = &stdout
	var frames *runner.FrameKeeper
	if len(e.FramePrefixes) > 0 {
		frames = runner.NewFrameKeeper(e.FramePrefixes, t.Key, e.maxFrames())
		sink = io.MultiWriter(&stdout, frames)
	}
	var readers sync.WaitGroup
	readers.Go(func() { io.Copy(sink, outR) })
	readers.Go(func() { io.Copy(&stderr, errR) })

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-ctx.Done():
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		_ = signalGroup(cmd.Process, false)
		select {
		case <-waited:
		case <-time.After(grace):
			_ = signalGroup(cmd.Process, true)
			<-waited
		}
	}
	res.Duration = time.Since(begin)
	// The leader is gone; whatever is left in its group is a straggler of this trial. The pgid
	// cannot have been reused: the kernel keeps a pid while a group of that id exists.
	_ = signalGroup(cmd.Process, true)

	// Pipes reach EOF once the group is dead. A process that escaped the group (setsid) may
	// still hold them: stop waiting after a moment rather than hang the trial.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	res.Stdout, res.Stderr = stdout.bytes(), stderr.bytes()
	res.Truncated = stdout.dropped || stderr.dropped
	if frames != nil {
		res.Frames = frames.Bytes()
		res.FramesLost = frames.Lost()
		res.Truncated = res.Truncated || frames.Capped()
	}
	return res, nil
}

func (e *Executor) maxFrames() int {
	if e.MaxFrames > 0 {
		return e.MaxFrames
	}
	return runner.MaxFrames
}

func exitCodeParse(_ runner.Trial, res runner.ProcResult) (model.Record, error) {
	if res.ExitCode == 0 {
		return model.Record{Outcome: model.Correct}, nil
	}
	return model.Record{Outcome: model.HarnessError,
		Error: fmt.Sprintf("exit %d: %s", res.ExitCode, tail(res.Stderr, 400))}, nil
}

// tailBuffer keeps the last max bytes written: the end of a log is where the error is.
type tailBuffer struct {
	buf     []byte
	max     int
	dropped bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max { // trim in batches so the copy is amortized
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
		b.dropped = true
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	if len(b.buf) > b.max {
		b.dropped = true
		return b.buf[len(b.buf)-b.max:]
	}
	return b.buf
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
