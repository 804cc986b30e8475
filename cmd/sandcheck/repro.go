package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

func init() {
	cli.Register("repro", "run the seed's repro N times and print a ready-to-paste bug report (Markdown)", reproCmd)
}

// reproCmd runs the network scenario (an allowed and a denied request, over every channel) n
// times and prints report.md: Summary, Environment, Settings, Repro, Observed, Expected, with the
// evidence of one trial per outcome, in the shape of the bug report that started this project.
// It exits as run does (1: the report shows a failure), printing the report for 0, 1 and 3.
func reproCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("repro", "[--target srt] [-n 10] [--settings FILE] [--out DIR]", `  sandcheck repro -n 10 > bug-report.md
  sandcheck repro -n 20 --settings ~/.srt-settings.json --out out/repro   # also out/repro/repro/*.sh
  sandcheck repro --target claude-code --settings ~/.claude/settings.json   # the seed's repro through Claude Code`, stderr)
	var o trialOptions
	o.bind(fs, true)
	n := fs.Int("n", 10, "trials")
	j := fs.Int("j", 1, "trials in parallel")
	out := fs.String("out", "", "keep the run (journal, reports, and standalone reproducers in DIR/repro) in this directory")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "sandcheck-repro-")
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck repro: %v\n", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	}
	labels := cmp.Or(o.labels, "network")
	if name, _ := orchestrate.SplitTarget(o.target); o.labels == "" && name == claudecode.Name {
		labels = "claude-seed-repro" // the seed's own invocation and curls, through Claude Code
	}
	run := []string{"--target", o.target, "--label-filter", labels, "-n", strconv.Itoa(*n), "-j", strconv.Itoa(*j),
		"--out", dir, "--plain", "--keep-failures", "--fault", o.fault, "--hostnames", o.Hostnames, "--user", o.user}
	for _, f := range [][2]string{{"--target-settings", o.targetSettings}, {"--settings", o.Settings}, {"--target-path", o.TargetPath}} {
		if f[1] != "" {
			run = append(run, f[0], f[1])
		}
	}
	cli.Args = append([]string{"repro"}, args...)
	code := runCmd(run, io.Discard, stderr)
	switch code {
	case cli.ExitPass, cli.ExitFail, cli.ExitHarness: // the trials ran: there is a report, the finding in it
	default:
		return code
	}
	// The report a maintainer reads: the known findings' evidence (--keep-failures) shown.
	if err := format.WriteMarkdownFrom(stdout, dir, format.Options{Repro: cli.CommandLine(cli.Args), KnownEvidence: true}); err != nil {
		fmt.Fprintf(stderr, "sandcheck repro: %v\n", err)
		return cli.ExitHarness
	}
	if *out != "" {
		reproscript.Report(stdout, stderr, filepath.Join(dir, "journal.jsonl"), filepath.Join(dir, "repro"))
	}
	return code
}
