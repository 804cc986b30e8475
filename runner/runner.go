// Package runner repeats every cell of a matrix as independent trials, with bounded parallelism
// and a deadline per trial, and appends each finished trial to a journal (fsynced) before counting
// it, so a crash or Ctrl-C never loses one and --resume never runs one twice.
//
// The runner knows nothing about Ginkgo or sandboxes: it schedules Trials through an Executor.
// runner/process's Executor runs each trial as a child process in its own process group;
// runner/rundir guards the run directory and runner/progress shows how far the run is.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/progress"
	"github.com/sandcheck/sandcheck/runner/rundir"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// Trial is one run of one cell.
type Trial struct {
	RunID   string
	Cell    model.Cell
	Index   int           // 0-based index within the cell; (Cell.ID, Index) is unique in a journal
	Timeout time.Duration // the deadline Run put on ctx, for executors that pass it on
	// Budget is how long the trial itself may take so that it can still tear down and report
	// before Timeout (see TrialBudget); executors pass it on to the trial process.
	Budget time.Duration
	// Key is a random secret of this trial, handed to the trial process on its stdin (see
	// EnvResultKeyFD). The trial frames its result and egress lines with it, so output the
	// sandboxed command prints cannot pass for the trial's own.
	Key string
	Dir string // the run directory; executors may keep per-trial files under it
	// Procs is where an executor registers the process groups it starts, so that a later run
	// can kill what survives a kill -9 of this one. Nil outside Run.
	Procs ProcTracker
}

// Executor runs one trial. It must return a Record even when the trial could not run
// (Outcome harness-error, Error set) or overran ctx's deadline (Outcome timeout), and must stop
// everything it started when ctx is done. Run fills in V, RunID, Cell and Trial.
type Executor interface {
	Run(ctx context.Context, t Trial) model.Record
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, t Trial) model.Record

// Run calls f.
func (f ExecutorFunc) Run(ctx context.Context, t Trial) model.Record { return f(ctx, t) }

// Stopper is an adaptive stop rule for one cell (the lead backs it with SPRT). Observe is called
// with each counted trial's verdict, in completion order, resumed trials first; once it returns
// true no further trial of the cell is started (ones already running still finish and count).
type Stopper interface {
	Observe(pass bool) (stop bool)
}

// RecordStopper is a Stopper that decides on whole records rather than on Passed (bisect
// watches one scenario's outcome). When a cell's Stopper implements it, ObserveRecord is called
// instead of Observe, for every counted record, resumed ones first.
type RecordStopper interface {
	Stopper
	ObserveRecord(rec model.Record) (stop bool)
}

// StopperFunc adapts a function to Stopper.
type StopperFunc func(pass bool) (stop bool)

// Observe calls f.
func (f StopperFunc) Observe(pass bool) bool { return f(pass) }

// ProcTracker records the process groups of running trials.
type ProcTracker interface {
	Started(pgid int)
	Exited(pgid int)
}

// Options configure Run. Cells, Trials and Dir are required.
type Options struct {
	Cells []model.Cell // in the stable matrix order
	Shard matrix.Shard // zero = all cells
	// Trials per cell: the fixed N, or with NewStopper the most a cell may take.
	Trials     int
	NewStopper func(model.Cell) Stopper // nil = fixed N
	Parallel   int                      // concurrent trials (-j); default 1
	Timeout    time.Duration            // per trial; default 5m
	// Abandon is how long past a trial's deadline Run waits for an executor that ignores ctx
	// before recording a timeout and moving on without it; default 30s.
	Abandon time.Duration

	// Dir is the run directory: journal.jsonl, the pgid file and a lock (rundir) live there.
	Dir string
	// FullJournal journals every trial with its evidence. By default a trial that passed, or
	// failed only by pinned known findings, is journaled compact (journal.KeepsEvidence).
	FullJournal bool
	// KeepFailures journals every failing trial with its evidence, those failing only by known
	// findings too: a run that writes reproducers (run --repro-dir, repro) makes them from it.
	KeepFailures bool
	// Resume skips (cell, trial) pairs the journal already holds. Without it a Dir whose
	// journal holds trials is refused, so two runs are never mixed by accident.
	Resume bool
	RunID  string // default: the resumed journal's, else a fresh one

	Progress      io.Writer     // nil = silent
	Plain         bool          // plain lines even on a terminal
	ProgressEvery time.Duration // period of plain lines; default 10s
}

// Files inside Options.Dir (and rundir.PgidFile, rundir.LockFile).
const (
	JournalFile = "journal.jsonl"
	ScratchDir  = "scratch" // process.Executor's default parent of per-trial scratch dirs
)

// Summary is what a run (plus what it resumed) amounts to.
type Summary struct {
	RunID     string
	Journal   string
	Cells     []CellSummary // in Options.Cells order, after sharding
	Ran       int           // trials run and journaled by this call
	Resumed   int           // trials of these cells already in the journal
	Leftovers int           // process groups of an earlier killed run, killed at start
	Warnings  []string
}

// CellSummary counts the journaled trials of one cell.
type CellSummary struct {
	Cell    model.Cell
	Trials  int
	Counts  map[model.Outcome]int
	Stopped bool // the Stopper decided before Trials ran out
}

// Passed says whether a record counts as a pass for a Stopper, and whether it counts at all:
// a trial that measured nothing (harness errors, timeouts, not-applicable) is not observed. A
// failure the known findings cover in full is not what an adaptive run decides, so it passes, as
// `run` lets it; fail-open evidence no finding covers never does (model.Record.Failure).
func Passed(rec model.Record) (pass, counted bool) {
	if !rec.Measured() {
		return false, false
	}
	return rec.Failure().MetBy(model.Accept{Every: true}), true
}

type cellState struct {
	cell      model.Cell
	fpRef     string       // reference of the host fingerprint, once a trial of the cell carried it
	done      map[int]bool // trial indexes in the journal before this call
	stopper   Stopper
	stopped   bool
	remaining int // indexes neither journaled nor dispatched yet
	sum       CellSummary
}

// Run runs opt.Cells × opt.Trials through exec. It returns when every trial is journaled, when
// ctx is cancelled (running trials are killed and not journaled; the error wraps ctx.Err()), or
// on a journal failure. Once trials have started the Summary is returned, error or not.
func Run(ctx context.Context, exec Executor, opt Options) (*Summary, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	unlock, err := rundir.Lock(opt.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	sum := &Summary{Journal: filepath.Join(opt.Dir, JournalFile)}
	if !opt.Resume {
		if st, err := os.Stat(sum.Journal); err == nil && st.Size() > 0 {
			return nil, fmt.Errorf("runner: %s already holds trials; resume it or use another directory", sum.Journal)
		}
	}
	// Leftovers first: a previous run killed with -9 may still have trials running that would
	// compete with ours for ports, namespaces and CPU.
	pgids := filepath.Join(opt.Dir, rundir.PgidFile)
	pids := rundir.NewPgidLog(pgids)
	n, err := rundir.KillLeftovers(pgids)
	sum.Leftovers = n
	if err != nil {
		sum.Warnings = append(sum.Warnings, err.Error())
	}
	if err := pids.Init(); err != nil {
		return nil, err
	}
	defer pids.Remove()
	// Scratch dirs of a killed run; nobody else uses them while we hold the lock.
	if err := os.RemoveAll(filepath.Join(opt.Dir, ScratchDir)); err != nil {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("remove old scratch dirs: %v", err))
	}

	jw, err := journal.OpenWriter(sum.Journal)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	defer jw.Close()
	if r := jw.Repaired(); r != "" {
		sum.Warnings = append(sum.Warnings, r)
	}

	cells := opt.Shard.Select(opt.Cells)
	states := make([]*cellState, len(cells))
	byID := make(map[string]*cellState, len(cells))
	for i, c := range cells {
		cs := &cellState{cell: c, done: map[int]bool{}, sum: CellSummary{Cell: c, Counts: map[model.Outcome]int{}}}
		if opt.NewStopper != nil {
			cs.stopper = opt.NewStopper(c)
		}
		if byID[c.ID] != nil {
			return nil, fmt.Errorf("runner: cell %s listed twice", c.ID)
		}
		states[i], byID[c.ID] = cs, cs
	}

	runID := opt.RunID
	// What the journal already holds, as the meter counts trials: outside the known findings.
	counts, known := map[model.Outcome]int{}, 0
	if opt.Resume {
		warn, err := journal.Scan(sum.Journal, func(rec model.Record) error {
			if runID == "" {
				runID = rec.RunID
			}
			cs := byID[rec.Cell.ID]
			if cs == nil || cs.done[rec.Trial] {
				return nil // another shard's cell, or (never written by us) a duplicate
			}
			cs.done[rec.Trial] = true
			cs.count(rec)
			cs.noteFingerprint(rec)
			sum.Resumed++
			o, k := rec.Outside(model.Accept{Every: true})
			counts[o]++
			if k {
				known++
			}
			return nil
		})
		sum.Warnings = append(sum.Warnings, warn...)
		if err != nil {
			return nil, fmt.Errorf("runner: resume: %w", err)
		}
	}
	if runID == "" {
		runID = newRunID()
	}
	sum.RunID = runID

	total := 0
	for _, cs := range states {
		if !cs.stopped {
			for i := range opt.Trials {
				if !cs.done[i] {
					cs.remaining++
				}
			}
		}
		total += cs.remaining
	}

	prog := progress.New(opt.Progress, opt.Plain, opt.ProgressEvery, sum.Resumed, total, counts, known)
	for _, w := range sum.Warnings {
		prog.Note("warning: " + w)
	}
	if sum.Leftovers > 0 {
		prog.Note(fmt.Sprintf("killed %d process group(s) left running by an earlier run", sum.Leftovers))
	}
	prog.Start()

	s := &scheduler{states: states, limit: opt.Trials, prog: prog}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var wg sync.WaitGroup
	var durable sync.Mutex
	for range opt.Parallel {
		wg.Go(func() {
			for runCtx.Err() == nil {
				cs, idx, ok := s.next()
				if !ok {
					return
				}
				t := Trial{RunID: runID, Cell: cs.cell, Index: idx, Timeout: opt.Timeout, Dir: opt.Dir, Procs: pids,
					Budget: TrialBudget(opt.Timeout), Key: NewKey()}
				rec := runOne(runCtx, exec, t, opt.Abandon)
				if runCtx.Err() != nil {
					return // interrupted mid-trial: not finished, so not journaled; resume reruns it
				}
				// Journaled and counted as one step: a stopper sees the trials in journal order,
				// which is the order a resume replays them in (an adaptive stop depends on it).
				durable.Lock()
				err := jw.Append(s.lean(cs, rec, opt.FullJournal || opt.KeepFailures && rec.Failure().Failed()))
				if err == nil {
					s.finish(cs, rec) // counted only now that it is durable
				}
				durable.Unlock()
				if err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	prog.Stop()
	os.Remove(filepath.Join(opt.Dir, ScratchDir)) // empty by now unless an abandoned trial holds it

	for _, cs := range states {
		sum.Cells = append(sum.Cells, cs.sum)
	}
	sum.Ran = s.ran
	if err := pids.Err(); err != nil {
		sum.Warnings = append(sum.Warnings, err.Error())
	}
	if err := jw.Close(); err != nil {
		return sum, fmt.Errorf("runner: %w", err)
	}
	if cause := context.Cause(runCtx); cause != nil && runCtx.Err() != nil {
		if ctx.Err() != nil {
			return sum, fmt.Errorf("runner: interrupted after %d trial(s); journal %s is consistent, resume to finish: %w", s.ran, sum.Journal, ctx.Err())
		}
		return sum, fmt.Errorf("runner: stopped: %w", cause)
	}
	return sum, nil
}

// FromMatrix returns Options with the cells, trials (N, or the adaptive maximum), parallelism
// and timeout of m. The caller adds Dir, Resume, Shard, Progress and, when m.Adaptive is set,
// NewStopper.
func FromMatrix(m *matrix.Matrix) Options {
	return Options{Cells: m.Cells(), Trials: m.Trials, Parallel: m.Parallel, Timeout: m.Timeout}
}

// WriteTable prints one line per cell: its id, trial count and outcome counts in report order.
func (s *Summary) WriteTable(w io.Writer) error {
	for _, c := range s.Cells {
		line := fmt.Sprintf("%-40s %5d trials", c.Cell.ID, c.Trials)
		for _, o := range model.All {
			if n := c.Counts[o]; n > 0 {
				line += fmt.Sprintf("  %s=%d", o, n)
			}
		}
		if c.Stopped {
			line += "  (stop rule decided)"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return fmt.Errorf("runner: write summary: %w", err)
		}
	}
	return nil
}

func (opt *Options) defaults() error {
	switch {
	case opt.Dir == "":
		return errors.New("runner: no run directory")
	case len(opt.Cells) == 0:
		return errors.New("runner: no cells to run")
	case opt.Trials <= 0:
		return fmt.Errorf("runner: trials per cell must be at least 1, got %d", opt.Trials)
	case opt.Parallel < 0:
		return fmt.Errorf("runner: parallel must be at least 1, got %d", opt.Parallel)
	case opt.Timeout < 0:
		return fmt.Errorf("runner: timeout must be positive, got %s", opt.Timeout)
	}
	if opt.Shard.N > 0 && (opt.Shard.I < 1 || opt.Shard.I > opt.Shard.N) {
		return fmt.Errorf("runner: bad shard %d/%d", opt.Shard.I, opt.Shard.N)
	}
	if opt.Parallel == 0 {
		opt.Parallel = 1
	}
	if opt.Timeout == 0 {
		opt.Timeout = matrix.DefaultTimeout
	}
	if opt.Abandon == 0 {
		opt.Abandon = 30 * time.Second
	}
	if opt.ProgressEvery == 0 {
		opt.ProgressEvery = 10 * time.Second
	}
	return nil
}

// runOne runs a trial under its deadline. An executor that does not return within Abandon after
// the deadline is left behind (its result dropped) so one stuck trial cannot hang the run.
func runOne(ctx context.Context, exec Executor, t Trial, abandon time.Duration) model.Record {
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	ch := make(chan model.Record, 1) // buffered: an abandoned executor can still send and exit
	go func() { ch <- exec.Run(tctx, t) }()
	var rec model.Record
	select {
	case rec = <-ch:
	case <-tctx.Done():
		timer := time.NewTimer(abandon)
		select {
		case rec = <-ch:
			timer.Stop()
		case <-timer.C:
			rec = model.Record{Outcome: model.Timeout,
				Error: fmt.Sprintf("executor did not return %s after the %s deadline; abandoned", abandon, t.Timeout)}
		}
	}
	rec.V = journal.SchemaVersion
	rec.RunID, rec.Cell, rec.Trial = t.RunID, t.Cell, t.Index
	if rec.Start.IsZero() {
		rec.Start = start
	}
	if rec.DurationMS == 0 {
		rec.DurationMS = time.Since(start).Milliseconds()
	}
	if !rec.Outcome.Valid() {
		rec.Error = fmt.Sprintf("executor returned outcome %q; %s", rec.Outcome, rec.Error)
		rec.Outcome = model.HarnessError
	}
	return rec
}

// TrialBudget is the time a trial under deadline timeout may spend before it must wrap up:
// timeout less a reserve of a tenth (at least 2 s) for teardown, reading fixture logs,
// classifying and reporting, so that a slow sandbox yields a verdict rather than a kill. It
// never drops below a second (or half the timeout, when that is shorter).
func TrialBudget(timeout time.Duration) time.Duration {
	b := timeout - max(2*time.Second, timeout/10)
	return max(b, min(time.Second, timeout/2))
}

// NewKey returns a fresh random trial key (128 bits, hex).
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
