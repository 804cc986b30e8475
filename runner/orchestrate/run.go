package orchestrate

import (
	"context"
	"io"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner"
)

// Plan is a run configured before anything runs: the matrix (overrides laid over it, versions
// resolved), what every trial is handed, and the runner's options.
type Plan struct {
	Matrix *matrix.Matrix
	Trial  Trial
	Runner runner.Options // Progress is set by Run
	// Executors prepares the hosts (default: Executors); tests hand in fakes.
	Executors func(ctx context.Context, m *matrix.Matrix, self string, o *Trial, log io.Writer) (runner.Executor, func(), error)
}

// NewPlan makes the runner's options for m's cells: this shard of them, in dir (resuming what
// it holds), with the matrix's trials, parallelism, deadline and stop rule.
func NewPlan(m *matrix.Matrix, o Trial, shard matrix.Shard, dir string, resume bool) *Plan {
	return &Plan{Matrix: m, Trial: o, Executors: Executors, Runner: runner.Options{
		Cells: m.Cells(), Shard: shard, Trials: m.Trials, Parallel: m.Parallel, Timeout: m.Timeout,
		Dir: dir, Resume: resume, NewStopper: Stoppers(m),
	}}
}

// Prepare installs the plan's versions and prepares its hosts (self is this binary); it returns
// the executor of the plan's trials and the function that closes the hosts. An error here is
// the configuration's: no trial ran.
func (p *Plan) Prepare(ctx context.Context, self string, log io.Writer) (runner.Executor, func(), error) {
	if err := InstallVersions(ctx, p.Matrix, &p.Trial, log); err != nil {
		return nil, func() {}, err
	}
	return p.Executors(ctx, p.Matrix, self, &p.Trial, log)
}

// Run runs the plan's trials through exec, progress to progress.
func (p *Plan) Run(ctx context.Context, exec runner.Executor, progress io.Writer) (*runner.Summary, error) {
	opt := p.Runner
	opt.Progress = progress
	return runner.Run(ctx, exec, opt)
}
