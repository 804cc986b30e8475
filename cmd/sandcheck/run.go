package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/reports/runsummary"
	"github.com/sandcheck/sandcheck/reports/truthtable"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
)

func init() {
	cli.Register("run", "repeat the scenarios N times per cell and report outcome rates", runCmd)
}

const runExitHelp = `run accepts every known finding (targets/NAME/knownfindings.yaml): it reports what is new, and
its first line names the known findings that remain. The gate accepts only those its policy names
(accept_known), preflight only fail-closed ones: neither passes a known fail-open silently.

Exit codes:
  0    nothing failed outside the known findings in any trial
  1    fail-open: non-enforcing outside the known findings, or traffic to a fixture server the
       policy does not allow (egress), even in a trial that timed out or crashed; or a
       scenario failed outside the known findings
  2    usage or configuration error, nothing ran; or the journal could not be read back to
       judge (a corrupt line, a line over the reader's limit, a newer schema): no verdict
  3    harness errors or timeouts in more than --max-harness-rate of a cell's trials, or a cell
       whose every trial was not applicable (the target cannot express what it asks): nothing
       was measured
  130  interrupted: finished trials are in the journal; continue with --out DIR --resume
  When several apply, 1 wins over 3, and 3 over 0.`

// runFlags are the flags of run, bound to one flag set.
type runFlags struct {
	o                     trialOptions
	faults, users         cli.MultiFlag
	matrix, out, shard    string
	n, j                  int
	timeout               time.Duration
	resume, asJSON, plain bool
	full                  bool // --full-journal
	keepFail              bool // --keep-failures, or implied by --repro-dir
	maxHarness            float64
	reproDir              string
}

func newRunFlags(stderr io.Writer) (*flag.FlagSet, *runFlags) {
	fs := cli.NewFlags("run", "[flags]", `  sandcheck run -n 20                               # healthy srt, 20 trials
  sandcheck run --fault bridge-absent -n 20         # the detector must say proxy-dead
  sandcheck run --fault bridge-flaky:p=0.3 -n 200 -j 2 --json
  sandcheck run --matrix matrix/examples/local-faults.yaml --out out/nightly
  sandcheck run --out out/nightly --resume          # continue an interrupted run
  sandcheck run --matrix big.yaml --shard 2/4       # this machine's quarter of the cells
  sandcheck run --target command --target-settings '{"argv":["my-sandbox","--","sh","-c","{{.Command}}"],"reach":["http"]}'`, stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(stderr, "\n%s\n", runExitHelp)
	}
	f := &runFlags{}
	f.o.bind(fs, false)
	fs.Var(&f.faults, "fault", "inject a fault NAME[:k=v,...]; repeatable, each is its own cell; \"\" = healthy (see `sandcheck faults`)")
	fs.Var(&f.users, "user", userHelp+"; repeatable, each is its own cell on every host (overrides the hosts' user:)")
	fs.StringVar(&f.matrix, "matrix", "", "matrix YAML (default: the embedded one: srt, local, 20 trials)")
	fs.IntVar(&f.n, "n", 0, "trials per cell (overrides the matrix)")
	fs.IntVar(&f.j, "j", 0, "trials in parallel (overrides the matrix)")
	fs.DurationVar(&f.timeout, "timeout", 0, "deadline per trial (overrides the matrix); the trial itself gets a little less, to report before it")
	fs.StringVar(&f.out, "out", "", "run directory: journal.jsonl and reports (default out/run-TIMESTAMP)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in --out, skipping finished trials")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of n of the cells, e.g. 2/4")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object with outcome counts and the exit code instead of tables")
	fs.BoolVar(&f.plain, "plain", false, "plain progress lines even on a terminal")
	fs.BoolVar(&f.full, "full-journal", false, "journal every trial with its evidence (default: passing trials and those failing only by known findings are journaled compact, without evidence; each cell's first trial and every other failure keep theirs)")
	fs.Float64Var(&f.maxHarness, "max-harness-rate", 0.05, "exit 3 when harness errors and timeouts exceed this fraction of a cell's trials")
	fs.BoolVar(&f.keepFail, "keep-failures", false, "journal every failing trial with its evidence, those failing only by known findings too (implied by --repro-dir, whose reproducers are made from it); passing trials stay compact")
	fs.StringVar(&f.reproDir, "repro-dir", "", "write a standalone reproducer (DIR/<scenario-id-with-dashes>.sh, run without sandcheck) for every failing scenario that has one")
	return fs, f
}

// runPlan is a run configured from its flags and matrix, before anything runs.
type runPlan struct {
	*orchestrate.Plan
	asJSON     bool
	maxHarness float64
	reproDir   string
}

// planRun parses run's flags and loads the matrix. A nil plan comes with the exit code (0 for
// --help, cli.ExitUsage for anything wrong).
func planRun(args []string, stderr io.Writer) (*runPlan, int) {
	fs, f := newRunFlags(stderr)
	if ok, code := cli.Parse(fs, args); !ok {
		return nil, code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	fail := func(format string, a ...any) (*runPlan, int) {
		fmt.Fprintf(stderr, "sandcheck run: "+format+"\n", a...)
		return nil, cli.ExitUsage
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	if f.maxHarness < 0 || f.maxHarness > 1 {
		return fail("--max-harness-rate %g: want a fraction between 0 and 1", f.maxHarness)
	}
	m, err := orchestrate.LoadMatrix(f.matrix)
	if err != nil {
		return fail("%v", err)
	}
	if err := f.overrides(set).Apply(m); err != nil {
		return fail("%v", err)
	}
	sh, err := matrix.ParseShard(f.shard)
	if f.shard != "" && err != nil {
		return fail("--shard: %v", err)
	}
	dir := f.out
	if dir == "" {
		if f.resume {
			return fail("--resume needs --out DIR (the run to continue)")
		}
		dir = filepath.Join("out", "run-"+time.Now().UTC().Format("20060102-150405"))
	}
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := orchestrate.VersionsOnHosts(m); err != nil {
		return fail("versions: %v", err)
	}
	if err := orchestrate.ResolveVersions(rctx, m, dir, f.resume, stderr); err != nil {
		return fail("versions: %v", err)
	}
	p := &runPlan{Plan: orchestrate.NewPlan(m, f.o.Trial, sh, dir, f.resume), asJSON: f.asJSON, maxHarness: f.maxHarness, reproDir: f.reproDir}
	p.Runner.Plain, p.Runner.FullJournal, p.Runner.KeepFailures = f.plain, f.full, f.keepFail || f.reproDir != ""
	p.Executors = runExecutors
	return p, 0
}

// overrides are the flags that change the matrix: those given win.
func (f *runFlags) overrides(set map[string]bool) orchestrate.Overrides {
	ov := orchestrate.Overrides{Faults: f.faults, Users: f.users}
	if set["target"] {
		ov.Targets = f.o.targets
	}
	if set["target-settings"] {
		ov.TargetSettings = &f.o.targetSettings
	}
	if set["label-filter"] {
		ov.Labels = &f.o.labels
	}
	if set["n"] {
		ov.Trials = &f.n
	}
	if set["j"] {
		ov.Parallel = &f.j
	}
	if set["timeout"] {
		ov.Timeout = &f.timeout
	}
	return ov
}

// runExecutors prepares the hosts of a plan; tests replace it with fakes.
var runExecutors = orchestrate.Executors

func runCmd(args []string, stdout, stderr io.Writer) int {
	p, code := planRun(args, stderr)
	if p == nil {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return cli.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exec, closeHosts, err := p.Prepare(ctx, self, stderr)
	defer closeHosts() // once: closing cleans up after the sandbox's users, before the reports
	if err != nil {
		// No trial ran: a version that cannot be installed or a host that cannot be prepared is
		// the configuration's problem.
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return cli.ExitUsage
	}
	sum, err := p.Run(ctx, exec, stderr)
	closeHosts()
	if sum == nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return cli.ExitUsage
	}
	runErr := err
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", runErr)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	rep, err := cli.WriteReports(p.Runner.Dir, []string{sum.Journal}, stderr)
	if err != nil || rep == nil {
		// Nothing to judge: a verdict of an empty report would be a pass of nothing.
		fmt.Fprintf(stderr, "sandcheck run: the journal cannot be judged: %v\nexit %d: no verdict; the trials are in %s\n", err, cli.ExitUsage, sum.Journal)
		return cli.ExitUsage
	}
	cells := make([]model.Cell, len(sum.Cells))
	for i, c := range sum.Cells {
		cells[i] = c.Cell
	}
	end := runsummary.End(runsummary.Judge(rep, cells, p.maxHarness), ctx.Err() != nil, runErr)
	if p.asJSON {
		runsummary.JSON(stdout, rep, cells, sum.Journal, end)
	} else {
		runsummary.Observed(stdout, rep, cells)
		if err := truthtable.WriteTerminal(stdout, rep, cells, truthtable.TerminalOptions{}); err != nil {
			fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		}
		reproscript.Report(stdout, stderr, sum.Journal, p.reproDir) // none without --repro-dir
		fmt.Fprintf(stdout, "\njournal: %s\n", sum.Journal)
		runsummary.WriteEnding(stdout, end)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "interrupted: finished trials are in %s; continue with --out %s --resume\n", sum.Journal, p.Runner.Dir)
	}
	return end.Code
}
