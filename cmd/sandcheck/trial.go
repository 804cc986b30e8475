//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/doctor"
	"github.com/sandcheck/sandcheck/internal/shortlived"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
	"github.com/sandcheck/sandcheck/runner/process"
	_ "github.com/sandcheck/sandcheck/suites" // the compiled specs
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// testingT is the minimal testing.T Ginkgo needs outside `go test`.
type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

func init() {
	cli.Register("trial", "run the specs once, in this process (what `run` repeats)", trialCmd)
}

// config is the trial's configuration: the environment's (harness.FromEnv: the work directory,
// the deadline of a sandboxed run, strict mode...) with the flags laid over it, the flags winning.
// It is handed to the specs once (harness.Use), typed: nothing goes back through the environment.
func (o *trialOptions) config() (harness.Config, error) {
	if strings.Contains(o.target, "@") {
		// One version of an npm sandbox: resolved, installed, run from its executable.
		name, path, err := orchestrate.Pin(context.Background(), o.target, os.Stderr)
		if err != nil {
			return harness.Config{}, err
		}
		o.target, o.TargetPath = name, path
	}
	cfg, err := harness.FromEnv()
	if err != nil {
		return cfg, err
	}
	cfg.Target, cfg.TargetPath, cfg.Fault, cfg.Settings, cfg.Hostnames = o.target, o.TargetPath, o.fault, o.Settings, o.Hostnames
	cfg.User = model.NormalizeUser(o.user)
	if o.targetSettings != "" {
		cfg.TargetSettings = o.targetSettings
	}
	if o.budget > 0 {
		cfg.Deadline = phases.ProcessStart().Add(o.budget)
	}
	return cfg, cfg.Check()
}

func trialCmd(args []string, stdout, stderr io.Writer) int {
	// The runner's key for this trial's frames, read from stdin before anything starts: no
	// process (the sandbox, the command inside it) can find it and frame a result of its own.
	key, err := process.ReadKey(stdinLines)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
		return 2
	}
	shortlived.NoGCBelow(256 << 20) // a process per trial: a network trial allocates ~9 MB in all

	fs := cli.NewFlags("trial", "[flags]", `  sandcheck trial --label-filter network -v
  sandcheck trial --fault bridge-absent --report out/ginkgo.json
  sandcheck trial --emit --fingerprint     # what the runner starts on every host`, stderr)
	var o trialOptions
	o.bind(fs, true)
	report := fs.String("report", "", "write Ginkgo's JSON report here")
	verbose := fs.Bool("v", false, "verbose Ginkgo output")
	emit := fs.Bool("emit", false, "end stdout with one "+strings.TrimSpace(frame.ResultPrefix)+" line and stream every fixture hit as a "+
		strings.TrimSpace(frame.EgressPrefix)+" line (for the runner; keyed with the line read from descriptor $"+runner.EnvResultKeyFD+" when set)")
	fingerprint := fs.Bool("fingerprint", false, "include this host's fingerprint (sandcheck doctor) in the emitted result")
	budget := fs.Duration("budget", 0, "finish within this long of starting, teardown and report included: sandboxed runs are cut short to fit (0 = no budget)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	if *budget < 0 {
		fmt.Fprintf(stderr, "sandcheck trial: --budget %s: want a positive duration\n", *budget)
		return 2
	}
	o.budget = *budget
	cfg, err := o.config()
	if err == nil {
		err = harness.Use(cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
		return 2
	}
	// A runner's trial (--emit) was checked by its runner where the runner's PATH is its own
	// (local hosts), and is checked in its specs (harness.Open) everywhere.
	if !*emit {
		if code := refuseUnreachable("trial", cfg, true, stderr); code != 0 {
			return code
		}
	}
	if t, ok := undrivableTrial(cfg); ok {
		// A build the adapter cannot drive: not-applicable, with the reason, and nothing run.
		if *emit {
			err = frame.Emit(stdout, key, t, nil)
		} else {
			_, err = fmt.Fprintf(stdout, "outcome: %s  %s\n", t.Outcome, t.Hint)
		}
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
			return 1
		}
		return 0
	}
	var frames sync.Mutex // one frame at a time on stdout, whole
	if *emit {
		harness.OnEgress = func(h model.Hit) {
			frames.Lock()
			defer frames.Unlock()
			if err := frame.EmitEgress(stdout, key, h); err != nil {
				fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
			}
			flush(stdout)
		}
	}
	// The host's fingerprint (a dozen version and config reads, ~45 ms of processes) describes
	// the host, not the trial's run: it is taken alongside the specs rather than after them.
	var fpc chan json.RawMessage
	if *emit && *fingerprint {
		fpc = make(chan json.RawMessage, 1)
		go func() { fpc <- hostFingerprint(cfg, o.user) }()
	}
	specsStart := time.Now()
	phases.Add(phases.Start, specsStart.Sub(phases.ProcessStart()))
	ok := runSpecs(o.labels, *report, *verbose, stdout)
	reportStart := time.Now()
	if suiteReport == nil {
		fmt.Fprintln(stderr, "sandcheck trial: Ginkgo reported no suite")
		return 1
	}
	t := specreport.FromReports([]types.Report{*suiteReport})
	if *emit {
		var fp json.RawMessage
		if fpc != nil {
			fp = <-fpc
		}
		t.PhasesMS, t.Families = phases.Milliseconds(reportStart.Sub(specsStart), time.Since(reportStart)), specreport.FamilyCosts()
		frames.Lock()
		err := frame.Emit(stdout, key, t, fp)
		flush(stdout)
		frames.Unlock()
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprintf(stdout, "outcome: %s%s  %s\n", t.Outcome, knownOnly(t), t.Hint)
	}
	if !ok {
		return 1
	}
	return 0
}

// restartClocks makes a spare's trial count its time from now (see awaitTrial).
func restartClocks() { phases.RestartClock() }

// flush pushes buffered output out now: a frame must reach the runner before a kill can lose it.
func flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() error }); ok {
		f.Flush()
	}
}

// suiteReport is the suite's report, taken in this process once the specs ran (no JSON file
// written and read back: --report writes one for people who want it).
var suiteReport *types.Report

var _ = ginkgo.ReportAfterSuite("sandcheck trial result", func(r types.Report) { suiteReport = &r })

// runSpecs runs the compiled specs once in this process.
func runSpecs(labels, report string, verbose bool, out io.Writer) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	sc, rc := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = labels
	sc.RandomizeAllSpecs = false
	rc.JSONReport = report
	rc.NoColor = true
	rc.Succinct = !verbose
	rc.Verbose = verbose
	ginkgo.GinkgoWriter.TeeTo(out)
	return ginkgo.RunSpecs(&testingT{}, "sandcheck", sc, rc)
}

// hostFingerprint describes the host a trial ran on, collected where it ran (a container or VM
// reports itself, not the runner's machine), with the build of the trial's own target under test.
func hostFingerprint(cfg harness.Config, user string) json.RawMessage {
	opts := doctor.Options{User: doctor.UserOf(user, true)}
	t, err := harness.NewTarget(cfg)
	opts.UseSandbox(cfg.Target, t, err)
	b, _ := json.Marshal(doctor.Collect(opts))
	return b
}

// knownOnly says, for a failing trial whose every failure `run` lets through (known findings
// cover them in full), which findings those are: the trial then passes, and its outcome line must
// not read as news.
func knownOnly(t frame.Trial) string {
	var ids []string
	for _, sc := range t.Scenarios {
		if sc.FailsOutside(model.Accept{Every: true}) {
			return ""
		}
		ids = append(ids, sc.KnownIDs()...)
	}
	if len(ids) == 0 {
		return ""
	}
	return " (known findings only: " + strings.Join(model.SplitIDs(strings.Join(ids, ", ")), ", ") + ")"
}
