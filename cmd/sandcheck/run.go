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
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/journal"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/specreport"
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
		Fault: func(spec string) error { _, _, err := faults.Parse(spec); return err },
	}
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "[flags]", `  sandcheck run -n 20                               # healthy srt, 20 trials
  sandcheck run --fault bridge-absent -n 20         # the detector must say proxy-dead
  sandcheck run --fault bridge-flaky:p=0.3 -n 200 -j 2 --json
  sandcheck run --matrix matrix/examples/local-faults.yaml --out out/nightly
  sandcheck run --out out/nightly --resume          # continue an interrupted run
  sandcheck run --matrix big.yaml --shard 2/4       # this machine's quarter of the cells`, stderr)
	var o trialOptions
	o.bind(fs, false)
	var faultList multiFlag
	fs.Var(&faultList, "fault", "inject a fault NAME[:k=v,...]; repeatable, each is its own cell; \"\" = healthy (see `sandcheck faults`)")
	matrixFile := fs.String("matrix", "", "matrix YAML (default: the embedded one: srt, local, 20 trials)")
	n := fs.Int("n", 0, "trials per cell (overrides the matrix)")
	j := fs.Int("j", 0, "trials in parallel (overrides the matrix)")
	timeout := fs.Duration("timeout", 0, "deadline per trial (overrides the matrix)")
	out := fs.String("out", "", "run directory: journal.jsonl and reports (default out/run-TIMESTAMP)")
	resume := fs.Bool("resume", false, "continue the run in --out, skipping finished trials")
	shard := fs.String("shard", "", "run only shard i of n of the cells, e.g. 2/4")
	asJSON := fs.Bool("json", false, "print one JSON object with outcome counts instead of tables")
	plain := fs.Bool("plain", false, "plain progress lines even on a terminal")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	m, err := loadMatrix(*matrixFile)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return 2
	}
	if err := overrideMatrix(m, &o, set, faultList, *n, *j, *timeout); err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return 2
	}
	sh, err := matrix.ParseShard(*shard)
	if *shard != "" && err != nil {
		fmt.Fprintf(stderr, "sandcheck run: --shard: %v\n", err)
		return 2
	}
	dir := *out
	if dir == "" {
		if *resume {
			fmt.Fprintln(stderr, "sandcheck run: --resume needs --out DIR (the run to continue)")
			return 2
		}
		dir = filepath.Join("out", "run-"+time.Now().UTC().Format("20060102-150405"))
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exec, closeHosts, err := executors(ctx, m, self, &o, stderr)
	defer closeHosts()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return 1
	}
	opt := runner.Options{
		Cells: m.Cells(), Shard: sh, Trials: m.Trials, Parallel: m.Parallel, Timeout: m.Timeout,
		Dir: dir, Resume: *resume, Progress: stderr, Plain: *plain,
	}
	if m.Adaptive != nil {
		a := m.Adaptive
		h := stats.Hypotheses{P0: a.P0, P1: a.P1}
		opt.NewStopper = func(journal.Cell) runner.Stopper {
			s, _ := stats.NewSPRT(h, a.Alpha, a.Beta, a.Max)
			return sprtStopper{s}
		}
	}
	sum, err := runner.Run(ctx, exec, opt)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck run: %v\n", err)
		return 1
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if err := writeReports(dir, []string{sum.Journal}, stderr); err != nil {
		fmt.Fprintf(stderr, "sandcheck run: reports: %v\n", err)
	}
	if *asJSON {
		printJSON(stdout, sum)
	} else {
		printObserved(stdout, sum)
		fmt.Fprintf(stdout, "\njournal: %s\n", sum.Journal)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "interrupted: finished trials are in %s; continue with --out %s --resume\n", sum.Journal, dir)
		return 130
	}
	return 0
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
		if err := reg.Target(o.target, nil); err != nil {
			return fmt.Errorf("--target: %w", err)
		}
		m.Targets = []matrix.Target{{ID: o.target, Name: o.target, Settings: map[string]any{}}}
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

// trialArgv is the process of one trial on its host: sandcheck's `trial` command, emitting its
// verdict on stdout. The first trial of a cell also fingerprints the host.
func trialArgv(bin string, m *matrix.Matrix, t runner.Trial, o *trialOptions) []string {
	c := t.Cell
	argv := []string{bin, "trial", "--emit", "--target", targetName(m, c.Target), "--fault", c.Fault,
		"--label-filter", c.Labels, "--hostnames", o.hostnames}
	if t.Index == 0 {
		argv = append(argv, "--fingerprint")
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
	return argv
}

func targetName(m *matrix.Matrix, id string) string {
	if t, ok := m.Target(id); ok {
		return t.Name
	}
	return id
}

// executors prepares every host of the matrix and returns one executor dispatching each trial
// to its cell's host. Local trials run as process groups of this runner (tracked across a kill -9
// of the runner); other hosts run them through their driver.
func executors(ctx context.Context, m *matrix.Matrix, self string, o *trialOptions, stderr io.Writer) (runner.Executor, func(), error) {
	byHost := map[string]runner.Executor{}
	var opened []hosts.Host
	closeAll := func() {
		for _, h := range opened {
			if err := h.Close(); err != nil {
				fmt.Fprintf(stderr, "warning: closing host %s: %v\n", h.Name(), err)
			}
		}
	}
	for _, mh := range m.Hosts {
		if mh.Kind == matrix.KindLocal {
			byHost[mh.Name] = &runner.ProcessExecutor{
				Command: func(t runner.Trial, _ string) ([]string, []string, string) { return trialArgv(self, m, t, o), nil, "" },
				Parse:   parseTrial,
			}
			continue
		}
		h, err := hosts.New(mh)
		if err != nil {
			return nil, closeAll, err
		}
		opened = append(opened, h)
		bin, err := h.Prepare(ctx, self)
		if err != nil {
			return nil, closeAll, fmt.Errorf("prepare host %s: %w", mh.Name, err)
		}
		byHost[mh.Name] = &hosts.Executor{Host: h, Binary: bin,
			Argv:  func(t runner.Trial, bin string) []string { return trialArgv(bin, m, t, o) },
			Parse: recordFromStdout}
	}
	return runner.ExecutorFunc(func(ctx context.Context, t runner.Trial) journal.Record {
		return byHost[t.Cell.Host].Run(ctx, t)
	}), closeAll, nil
}

// parseTrial reads the verdict line a trial emitted on stdout into a journal record.
func parseTrial(_ runner.Trial, res runner.ProcResult) (journal.Record, error) {
	return recordFromStdout(res.Stdout)
}

func recordFromStdout(stdout []byte) (journal.Record, error) {
	t, fp, err := specreport.ParseEmitted(stdout)
	if err != nil {
		return journal.Record{}, err
	}
	return journal.Record{Outcome: t.Outcome, Hint: t.Hint, Scenarios: t.Scenarios, Evidence: t.Evidence, HostFP: fp}, nil
}

type sprtStopper struct{ s *stats.SPRT }

func (s sprtStopper) Observe(pass bool) bool {
	if s.s == nil {
		return false
	}
	return s.s.Step(!pass) != stats.Continue
}

// jsonSummary is the stable shape of `run --json`.
type jsonSummary struct {
	Trials   int                      `json:"trials"`
	Outcomes map[classify.Outcome]int `json:"outcomes"`
	Cells    []jsonCell               `json:"cells"`
	Journal  string                   `json:"journal"`
}

type jsonCell struct {
	ID       string                   `json:"id"`
	Target   string                   `json:"target"`
	Host     string                   `json:"host"`
	Fault    string                   `json:"fault"`
	Trials   int                      `json:"trials"`
	Outcomes map[classify.Outcome]int `json:"outcomes"`
	// FailureRate counts every trial whose outcome is not correct, harness trouble aside.
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
}

func cellRate(c runner.CellSummary) (fails, counted int) {
	for o, k := range c.Counts {
		switch o.Severity() {
		case classify.SevHarness, classify.SevSkip:
			continue
		}
		counted += k
		if o != classify.Correct {
			fails += k
		}
	}
	return fails, counted
}

func printJSON(w io.Writer, sum *runner.Summary) {
	js := jsonSummary{Outcomes: map[classify.Outcome]int{}, Cells: []jsonCell{}, Journal: sum.Journal}
	for _, c := range sum.Cells {
		jc := jsonCell{ID: c.Cell.ID, Target: c.Cell.Target, Host: c.Cell.Host, Fault: c.Cell.Fault,
			Trials: c.Trials, Outcomes: map[classify.Outcome]int{}}
		for o, k := range c.Counts {
			jc.Outcomes[o] += k
			js.Outcomes[o] += k
		}
		js.Trials += c.Trials
		fails, counted := cellRate(c)
		ci := stats.Wilson(fails, counted)
		jc.FailureRate, jc.CI95 = stats.Rate(fails, counted), [2]float64{ci.Low, ci.High}
		js.Cells = append(js.Cells, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(js)
}

// printObserved prints the seed's "Observed" section: per cell, each outcome's count and rate.
func printObserved(w io.Writer, sum *runner.Summary) {
	// One example hint per cell and outcome says why, as the seed's report did; per scenario,
	// how often it failed, so a run of many scenarios says which ones.
	hints := map[string]map[classify.Outcome]string{}
	type tally struct {
		failed, ran int
		outs        map[classify.Outcome]int
	}
	scen := map[string]map[string]*tally{}
	journal.Scan(sum.Journal, func(r journal.Record) error {
		if hints[r.Cell.ID] == nil {
			hints[r.Cell.ID] = map[classify.Outcome]string{}
			scen[r.Cell.ID] = map[string]*tally{}
		}
		if _, ok := hints[r.Cell.ID][r.Outcome]; !ok && r.Hint != "" {
			hints[r.Cell.ID][r.Outcome] = firstClause(r.Hint)
		}
		for _, sc := range r.Scenarios {
			t := scen[r.Cell.ID][sc.Name]
			if t == nil {
				t = &tally{outs: map[classify.Outcome]int{}}
				scen[r.Cell.ID][sc.Name] = t
			}
			t.ran++
			if !sc.Pass {
				t.failed++
				t.outs[sc.Outcome]++
			}
		}
		return nil
	})
	known, _ := knownfindings.SRT()
	for _, c := range sum.Cells {
		fault := c.Cell.Fault
		if fault == "" {
			fault = "none (healthy)"
		}
		fmt.Fprintf(w, "\nObserved: %s on %s, fault %s, %d trials\n", c.Cell.Target, c.Cell.Host, fault, c.Trials)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  OUTCOME\tCOUNT\tRATE\t95% CI (Wilson)\tSEVERITY")
		var outs []classify.Outcome
		for o := range c.Counts {
			outs = append(outs, o)
		}
		sort.Slice(outs, func(i, j int) bool { return indexOf(outs[i]) < indexOf(outs[j]) })
		for _, o := range outs {
			k := c.Counts[o]
			ci := stats.Wilson(k, c.Trials)
			fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t[%.1f%%, %.1f%%]\t%s\n", o, k, 100*stats.Rate(k, c.Trials), 100*ci.Low, 100*ci.High, o.Severity())
		}
		tw.Flush()
		for _, o := range outs {
			if h := hints[c.Cell.ID][o]; h != "" && o != classify.Correct {
				fmt.Fprintf(w, "  why %s: %s\n", o, h)
			}
		}
		var names []string
		for n, t := range scen[c.Cell.ID] {
			if t.failed > 0 {
				names = append(names, n)
			}
		}
		if len(names) == 0 || len(scen[c.Cell.ID]) < 2 {
			continue
		}
		sort.Strings(names)
		fmt.Fprintf(w, "  %d of %d scenarios passed in every trial; the others:\n", len(scen[c.Cell.ID])-len(names), len(scen[c.Cell.ID]))
		for _, n := range names {
			t := scen[c.Cell.ID][n]
			var parts []string
			for o, k := range t.outs {
				parts = append(parts, fmt.Sprintf("%s %d/%d", o, k, t.ran))
			}
			sort.Strings(parts)
			note := ""
			if _, ok := known.Lookup(n); ok && c.Cell.Target == known.Target && c.Cell.Fault == "" {
				note = "  (known finding)"
			}
			fmt.Fprintf(w, "    %s: %s%s\n", n, strings.Join(parts, ", "), note)
		}
	}
}

func indexOf(o classify.Outcome) int {
	for i, x := range classify.All {
		if x == o {
			return i
		}
	}
	return len(classify.All)
}

// firstClause keeps a hint's leading cause, before the per-channel details.
func firstClause(h string) string {
	if i := strings.Index(h, "; "); i > 0 {
		return h[:i]
	}
	return h
}
