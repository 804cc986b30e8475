package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/bisect"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
	"github.com/sandcheck/sandcheck/targets"
)

func init() {
	cli.Register("bisect", "find the first published version whose outcomes differ from a good one's (statistically, resumable)", bisectCmd)
}

const bisectHelp = `Runs the good and the bad version N times each, picks the scenario outcome whose rate differs
most between them (two-sided Fisher exact test), then bisects the published releases between
them: each midpoint runs until Wald's SPRT decides "like the good one" or "like the bad one" at
error rates alpha and beta (or --max-trials runs out: undecided, and the search stops there).
Every trial is journaled in --out; --resume continues without repeating one. Versions are
installed into the npm cache as the search reaches them.

Exit codes:
  0  found the first version that differs
  1  the endpoints do not differ on these scenarios, or a step stayed undecided
  2  usage or configuration error
  130 interrupted: continue with --out DIR --resume`

func bisectCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("bisect", "--target srt --label-filter SCENARIOS [--good V] [--bad V] [--json] [--out DIR [--resume]]",
		`  sandcheck bisect --target srt --label-filter 'network && seed' --good 0.0.60 --bad 0.0.70
  sandcheck bisect --target srt --label-filter filesystem --json        # oldest release .. latest
  sandcheck bisect --target srt --label-filter filesystem --out out/b --resume   # continue it (same flags)`, stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprintf(stderr, "\n%s\n", bisectHelp) }
	var o trialOptions
	o.bind(fs, true)
	good := fs.String("good", "", "the version known good: a version, dist-tag or pinned (default: the oldest release)")
	bad := fs.String("bad", "", "the version known bad (default: latest)")
	asJSON := fs.Bool("json", false, `print one JSON object: {"first_bad", "last_good", "trials", "event", "steps", ...}`)
	out := fs.String("out", "", "directory for the journal and reports (default out/bisect-TIMESTAMP)")
	resume := fs.Bool("resume", false, "continue the bisect in --out")
	n := fs.Int("n", bisect.DefaultEndpointTrials, "trials at each endpoint")
	alpha := fs.Float64("alpha", bisect.DefaultAlpha, "each step's chance of calling a good-like version bad")
	beta := fs.Float64("beta", bisect.DefaultBeta, "each step's chance of calling a bad-like version good")
	maxTrials := fs.Int("max-trials", bisect.DefaultMaxPerStep, "most trials at one midpoint before it counts as undecided")
	j := fs.Int("j", 2, "trials in parallel")
	timeout := fs.Duration("timeout", 120*time.Second, "deadline per trial")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sandcheck bisect: "+format+"\n", a...)
		return cli.ExitUsage
	}
	name, sel := orchestrate.SplitTarget(o.target)
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	case sel != "":
		return fail("--target %s: name the target only; the versions are --good and --bad", o.target)
	case o.TargetPath != "":
		return fail("--target-path: bisect runs published versions from the npm cache, not one executable")
	case strings.TrimSpace(o.labels) == "":
		return fail("--label-filter is required: the scenarios whose outcome changed (e.g. 'network && seed'); a whole-suite bisect decides on one scenario anyway")
	case *n < 2 || *maxTrials < 1 || *j < 1 || *timeout <= 0:
		return fail("-n must be at least 2, --max-trials and -j at least 1, --timeout positive")
	case !(*alpha > 0 && *alpha < 0.5 && *beta > 0 && *beta < 0.5):
		return fail("--alpha and --beta must be between 0 and 0.5")
	}
	if err := orchestrate.Registry().Target(name, nil); err != nil {
		return fail("--target: %v", err)
	}
	npm, ok := targets.NPMOf(name)
	if !ok {
		return fail("--target %s: %v", name, orchestrate.VersionedCheck(name))
	}
	settings := map[string]any{}
	if o.targetSettings != "" {
		if err := json.Unmarshal([]byte(o.targetSettings), &settings); err != nil {
			return fail("--target-settings: %v", err)
		}
	}
	if o.fault != "" {
		if err := orchestrate.Registry().Fault(o.fault); err != nil {
			return fail("--fault: %v", err)
		}
	}
	dir := *out
	if dir == "" {
		if *resume {
			return fail("--resume needs --out DIR (the bisect to continue)")
		}
		dir = filepath.Join("out", "bisect-"+time.Now().UTC().Format("20060102-150405"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := matrix.Target{ID: name, Name: name, Settings: settings}
	list, goodV, badV, err := orchestrate.BisectRange(ctx, t, npm, *good, *bad, stderr)
	if err != nil {
		return fail("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	answer, err := orchestrate.RunBisect(ctx, self, orchestrate.BisectJob{
		Target: t, NPM: npm, Releases: list, Good: goodV, Bad: badV, Labels: o.labels, Fault: matrix.NormalizeFault(o.fault), User: o.user, Trial: &o.Trial,
		Options: bisect.Options{
			Dir: dir, Resume: *resume, Parallel: *j, Timeout: *timeout,
			EndpointTrials: *n, Alpha: *alpha, Beta: *beta, MaxPerStep: *maxTrials,
			Progress: stderr, // with --json, stdout holds the JSON alone
		},
		Reports: func(dir string, journals []string) error {
			_, err := cli.WriteReports(dir, journals, stderr)
			return err
		},
	})
	code := 0
	switch {
	case ctx.Err() != nil:
		code = cli.ExitInterrupted
		fmt.Fprintf(stderr, "interrupted: finished trials are in %s; continue with --out %s --resume\n", dir, dir)
	case errors.Is(err, bisect.ErrNoDifference):
		code = 1
	case err != nil && answer.Result == nil:
		return fail("%v", err)
	case err != nil:
		code = 1
	case answer.Undecided != "":
		code = 1
	}
	if *asJSON {
		answer.WriteJSON(stdout)
		return code
	}
	if err != nil {
		fmt.Fprintf(stdout, "no answer: %v\n", err)
		return code
	}
	answer.WriteText(stdout)
	return code
}
