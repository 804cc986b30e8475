package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/runsummary"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/trialresult"
	"github.com/sandcheck/sandcheck/targets"
)

func init() {
	register("run", "repeat the scenarios N times per cell and report outcome rates", runCmd)
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// registry validates matrix names against what this binary knows.
func registry() matrix.Registry {
	return matrix.Registry{
		Target: func(name string, _ map[string]any) error {
			for _, n := range targets.Names() {
				if n == name {
					return nil
				}
			}
			return fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(targets.Names(), ", "))
		},
		Fault:     func(spec string) error { _, _, err := faults.Parse(spec); return err },
		Versioned: versionedCheck,
		HostKinds: hosts.Matrix(),
	}
}

// Exit codes of run (and repro).
const (
	exitPass        = 0   // every scenario passed; failures covered by known findings allowed
	exitFail        = 1   // a fail-open, or a scenario failure outside the known findings
	exitUsage       = 2   // usage or configuration error: nothing ran
	exitHarness     = 3   // harness errors or timeouts above --max-harness-rate
	exitInterrupted = 130 // Ctrl-C or SIGTERM; finished trials are journaled
)

const runExitHelp = `Exit codes:
  0    every scenario passed in every trial; a failure covered in full by a known finding
       (knownfindings/) is allowed
  1    fail-open: non-enforcing outside the known findings, or traffic to a fixture server the
       policy does not allow (egress), even in a trial that timed out or crashed; or a
       scenario failed outside the known findings
  2    usage or configuration error; nothing ran
  3    harness errors or timeouts in more than --max-harness-rate of a cell's trials
  130  interrupted: finished trials are in the journal; continue with --out DIR --resume
  When several apply, 1 wins over 3, and 3 over 0.`

// runFlags are the flags of run, bound to one flag set.
type runFlags struct {
	o          trialOptions
	faults     multiFlag
	users      multiFlag
	matrix     string
	n, j       int
	timeout    time.Duration
	out        string
	resume     bool
	shard      string
	asJSON     bool
	plain      bool
	full       bool
	maxHarness float64
}

func newRunFlags(stderr io.Writer) (*flag.FlagSet, *runFlags) {
	fs := newFlags("run", "[flags]", `  sandcheck run -n 20                               # healthy srt, 20 trials
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
	return fs, f
}

// runPlan is a run configured from its flags and matrix, before anything runs.
type runPlan struct {
	m          *matrix.Matrix
	o          trialOptions
	opt        runner.Options // without Progress, which needs the command's stderr
	asJSON     bool
	maxHarness float64
}

// planRun parses run's flags and loads the matrix. A nil plan comes with the exit code (0 for
// --help, exitUsage for anything wrong).
func planRun(args []string, stderr io.Writer) (*runPlan, int) {
	fs, f := newRunFlags(stderr)
	if ok, code := parse(fs, args); !ok {
		return nil, code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	fail := func(format string, a ...any) (*runPlan, int) {
		fmt.Fprintf(stderr, "sandcheck run: "+format+"\n", a...)
		return nil, exitUsage
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	if f.maxHarness < 0 || f.maxHarness > 1 {
		return fail("--max-harness-rate %g: want a fraction between 0 and 1", f.maxHarness)
	}
	m, err := loadMatrix(f.matrix)
	if err != nil {
		return fail("%v", err)
	}
	if err := overrideMatrix(m, &f.o, set, f.faults, f.n, f.j, f.timeout); err != nil {
		return fail("%v", err)
	}
	if err := overrideUsers(m, f.users); err != nil {
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
	if err := versionsOnHosts(m); err != nil {
		return fail("versions: %v", err)
	}
	if err := resolveVersions(rctx, m, dir, f.resume, stderr); err != nil {
		return fail("versions: %v", err)
	}
	p := &runPlan{m: m, o: f.o, asJSON: f.asJSON, maxHarness: f.maxHarness}
	p.opt = runner.Options{
		Cells: m.Cells(), Shard: sh, Trials: m.Trials, Parallel: m.Parallel, Timeout: m.Timeout,
		Dir: dir, Resume: f.resume, Plain: f.plain, FullJournal: f.full,
	}
	if m.Adaptive != nil {
		a := m.Adaptive
		h := stats.Hypotheses{P0: a.P0, P1: a.P1}
		p.opt.NewStopper = func(model.Cell) runner.Stopper {
			s, _ := stats.NewSPRT(h, a.Alpha, a.Beta, a.Max)
			return sprtStopper{s}
		}
	}
	return p, 0
}

// runExecutors prepares the hosts of a plan; tests replace it with fakes.
var runExecutors = executors

func runCmd(args []string, stdout, stderr io.Writer) int {
	p, code := planRun(args, stderr)
	if p == nil {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := installVersions(ctx, p.m, &p.o, stderr); err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return exitUsage
	}
	exec, closeHosts, err := runExecutors(ctx, p.m, self, &p.o, stderr)
	defer closeHosts() // once: closing cleans up after the sandbox's users, before the reports
	if err != nil {
		// No trial ran: a host that cannot be prepared is the configuration's problem.
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return exitUsage
	}
	opt := p.opt
	opt.Progress = stderr
	sum, err := runner.Run(ctx, exec, opt)
	closeHosts()
	if sum == nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return exitUsage
	}
	runErr := err
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", runErr)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	rep, err := writeReports(p.opt.Dir, []string{sum.Journal}, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: reports: %v\n", err)
	}
	if rep == nil {
		rep = &schema.Report{} // the journal could not be read: nothing to judge but what ran
	}
	cells := make([]model.Cell, len(sum.Cells))
	for i, c := range sum.Cells {
		cells[i] = c.Cell
	}
	v := exitOf(runsummary.Judge(rep, cells, p.maxHarness))
	switch {
	case ctx.Err() != nil:
		v = runVerdict{exitInterrupted, append([]string{"interrupted; so far: " + v.String()}, v.reasons...)}
	case runErr != nil && v.code == exitPass:
		v = runVerdict{exitHarness, []string{"the run stopped early: " + runErr.Error()}}
	}
	if p.asJSON {
		runsummary.JSON(stdout, rep, cells, sum.Journal, runsummary.Verdict{Reasons: v.reasons}, v.code)
	} else {
		runsummary.Observed(stdout, rep, cells)
		fmt.Fprintf(stdout, "\njournal: %s\n", sum.Journal)
		printVerdict(stdout, v)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "interrupted: finished trials are in %s; continue with --out %s --resume\n", sum.Journal, p.opt.Dir)
	}
	return v.code
}

func loadMatrix(file string) (*matrix.Matrix, error) {
	if file == "" {
		return matrix.Default(registry())
	}
	return matrix.Load(file, registry())
}

// overrideMatrix applies command-line flags over the matrix: a flag given wins.
func overrideMatrix(m *matrix.Matrix, o *trialOptions, set map[string]bool, faultList []string, n, j int, timeout time.Duration) error {
	reg := registry()
	if set["target"] {
		ts, err := flagTargets(o.targets)
		if err != nil {
			return err
		}
		m.Targets = ts
	}
	if set["target-settings"] {
		var ts map[string]any
		if err := json.Unmarshal([]byte(o.targetSettings), &ts); err != nil || ts == nil {
			return fmt.Errorf("--target-settings %q: want one JSON object of the target's settings (as in a matrix): %v", o.targetSettings, err)
		}
		if len(m.Targets) != 1 {
			return fmt.Errorf("--target-settings: the matrix has %d targets; say which with --target", len(m.Targets))
		}
		m.Targets[0].Settings = ts
	}
	if len(faultList) > 0 {
		m.Faults = nil
		for _, f := range faultList {
			if err := reg.Fault(f); err != nil {
				return fmt.Errorf("--fault: %w", err)
			}
			m.Faults = append(m.Faults, matrix.NormalizeFault(f))
		}
	}
	if set["label-filter"] {
		m.Scenarios = o.labels
	}
	if set["n"] {
		if n <= 0 {
			return fmt.Errorf("-n %d: want a positive number of trials", n)
		}
		m.Trials, m.Adaptive = n, nil
	}
	if set["j"] {
		if j <= 0 {
			return fmt.Errorf("-j %d: want a positive number", j)
		}
		m.Parallel = j
	}
	if set["timeout"] {
		if timeout <= 0 {
			return fmt.Errorf("--timeout %s: want a positive duration", timeout)
		}
		m.Timeout = timeout
	}
	return nil
}

// overrideUsers applies --user over every host's user: list.
func overrideUsers(m *matrix.Matrix, list []string) error {
	if len(list) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var us []string
	for _, u := range list {
		u = strings.TrimSpace(u)
		if err := users.Check(u); err != nil {
			return fmt.Errorf("--user: %w", err)
		}
		if !seen[u] {
			seen[u] = true
			us = append(us, u)
		}
	}
	for i := range m.Hosts {
		m.Hosts[i].Users = us
	}
	return nil
}

// trialArgv is the process of one trial on its host: sandcheck's `trial` command, emitting its
// verdict on stdout. The first trial of a cell also fingerprints the host.
func trialArgv(bin string, m *matrix.Matrix, t runner.Trial, o *trialOptions) []string {
	c := t.Cell
	target := targetName(m, c.Target)
	versionPath := ""
	if c.Version != "" {
		// The installed version's executable (installVersions); failing that, the trial
		// resolves and installs NAME@VERSION itself, never silently running another build.
		if versionPath = o.versionPaths[c.Target+"@"+c.Version]; versionPath == "" {
			target += "@" + c.Version
		}
	}
	argv := []string{bin, "trial", "--emit", "--target", target, "--fault", c.Fault,
		"--label-filter", c.Labels, "--hostnames", o.hostnames, "--user", users.Recorded(c.User)}
	if t.Index == 0 {
		argv = append(argv, "--fingerprint")
	}
	if t.Budget > 0 {
		argv = append(argv, "--budget", t.Budget.String())
	}
	if t, ok := m.Target(c.Target); ok {
		if len(t.Settings) > 0 {
			b, _ := json.Marshal(t.Settings)
			argv = append(argv, "--target-settings", string(b))
		}
		if p, ok := t.Settings["path"].(string); ok && p != "" {
			argv = append(argv, "--target-path", p)
		}
		if s, ok := t.Settings["settings_file"].(string); ok && s != "" {
			argv = append(argv, "--settings", s)
		}
	}
	if o.settings != "" {
		argv = append(argv, "--settings", o.settings)
	}
	if o.targetPath != "" {
		argv = append(argv, "--target-path", o.targetPath)
	}
	if versionPath != "" {
		argv = append(argv, "--target-path", versionPath) // last, so it wins
	}
	return argv
}

func targetName(m *matrix.Matrix, id string) string {
	if t, ok := m.Target(id); ok {
		return t.Name
	}
	return id
}

// executors prepares every host of the matrix and returns one executor dispatching each trial
// to its cell's host, and the function that closes the hosts (once, however often called).
func executors(ctx context.Context, m *matrix.Matrix, self string, o *trialOptions, stderr io.Writer) (runner.Executor, func(), error) {
	byHost := map[string]runner.Executor{}
	var opened []hosts.Host
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			for _, h := range opened {
				if err := h.Close(); err != nil {
					fmt.Fprintf(stderr, "warning: closing host %s: %v\n", h.Name(), err)
				}
			}
		})
	}
	for _, mh := range m.Hosts {
		h, err := hosts.New(mh, hosts.Options{Log: stderr})
		if err != nil {
			return nil, closeAll, err
		}
		opened = append(opened, h)
		bin, err := h.Prepare(ctx, self)
		if err != nil {
			return nil, closeAll, fmt.Errorf("prepare host %s: %w", mh.Name, err)
		}
		e, err := hosts.NewExecutor(h, hosts.Trials{Binary: bin,
			Argv:   func(t runner.Trial, bin string) []string { return trialArgv(bin, m, t, o) },
			Parse:  trialresult.Parse,
			Frames: trialresult.Prefixes})
		if err != nil {
			return nil, closeAll, err
		}
		byHost[mh.Name] = e
	}
	return runner.ExecutorFunc(func(ctx context.Context, t runner.Trial) model.Record {
		return byHost[t.Cell.Host].Run(ctx, t)
	}), closeAll, nil
}

type sprtStopper struct{ s *stats.SPRT }

func (s sprtStopper) Observe(pass bool) bool {
	if s.s == nil {
		return false
	}
	return s.s.Step(!pass) != stats.Continue
}

// runVerdict is the exit code of a run and why.
type runVerdict struct {
	code    int
	reasons []string
}

// exitOf gives a run's verdict its exit code (see runExitHelp).
func exitOf(v runsummary.Verdict) runVerdict {
	switch v.Kind {
	case runsummary.Fail:
		return runVerdict{exitFail, v.Reasons}
	case runsummary.Harness:
		return runVerdict{exitHarness, v.Reasons}
	}
	return runVerdict{exitPass, nil}
}

// String names the verdict's exit code in words.
func (v runVerdict) String() string {
	switch v.code {
	case exitPass:
		return "exit 0 (every scenario passed)"
	case exitFail:
		return "exit 1 (fail-open or failure outside the known findings)"
	case exitHarness:
		return "exit 3 (harness errors or timeouts above the bound)"
	}
	return fmt.Sprintf("exit %d", v.code)
}

func printVerdict(w io.Writer, v runVerdict) {
	switch v.code {
	case exitPass:
		fmt.Fprintln(w, "exit 0: every scenario passed (known findings allowed)")
	default:
		for _, r := range v.reasons {
			fmt.Fprintf(w, "exit %d: %s\n", v.code, r)
		}
	}
}
