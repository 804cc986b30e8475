package reportcmd

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/reports/compare"
	"github.com/sandcheck/sandcheck/reports/gate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

func init() {
	cli.Register("report", "turn journals (merged shards) into report.json/.md/.html and junit.xml", reportCmd)
	cli.Register("compare", "compare a run's report.json with a baseline; exit 1 on a regression", compareCmd)
	cli.Register("gate", "release qualification: exit 1 on any fail-open, harness trouble or fail-closed rates above policy, or too few trials", gateCmd)
}

func reportCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("report", "JOURNAL... --out DIR", `  sandcheck report out/run/journal.jsonl --out out/run
  sandcheck report shard-*/journal.jsonl --out merged    # merge the shards of a CI matrix`, stderr)
	out := fs.String("out", "", "folder for report.json, report.md, junit.xml, report.html (required)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "sandcheck report: need journals and --out DIR (sandcheck report --help)")
		return 2
	}
	if _, err := cli.WriteReports(*out, fs.Args(), stderr); err != nil {
		fmt.Fprintf(stderr, "sandcheck report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s/{report.json,report.md,junit.xml,report.html}\n", *out)
	return 0
}

func compareCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("compare", "BASE.json NEW.json [--alpha 0.05]  |  REPORT.json --versions [OLD,NEW] [--target srt]", `  sandcheck compare baseline/report.json out/nightly/report.json
  sandcheck compare out/sweep/report.json --versions 0.0.60,0.0.83   # two versions of one run
  sandcheck compare out/rc/report.json --versions all               # its oldest vs its newest version`, stderr)
	alpha := fs.Float64("alpha", 0.05, "significance of a rate increase (one-sided Fisher's exact test)")
	vers := fs.String("versions", "", "compare two versions of one target within REPORT.json: OLD,NEW (baseline first), or all: its oldest and newest")
	target := fs.String("target", "", "with --versions: the target whose versions to compare (needed when the report holds several)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var res compare.Result
	switch {
	case set["versions"]:
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "sandcheck compare --versions: need one REPORT.json")
			return 2
		}
		from, to := "", ""
		if v := strings.TrimSpace(*vers); v != "" && v != "all" {
			var ok bool
			if from, to, ok = strings.Cut(v, ","); !ok || from == "" || to == "" {
				fmt.Fprintf(stderr, "sandcheck compare: --versions %q: want OLD,NEW (e.g. 0.0.60,0.0.83)\n", v)
				return 2
			}
		}
		rep, err := schema.ReadFile(fs.Arg(0))
		if err == nil {
			res, err = compare.Versions(rep, *target, strings.TrimSpace(from), strings.TrimSpace(to), *alpha)
		}
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck compare: %v\n", err)
			return 2
		}
	default:
		if fs.NArg() != 2 {
			fmt.Fprintln(stderr, "sandcheck compare: need BASE.json and NEW.json (or REPORT.json --versions)")
			return 2
		}
		var err error
		if res, err = compare.Files(fs.Arg(0), fs.Arg(1), *alpha); err != nil {
			fmt.Fprintf(stderr, "sandcheck compare: %v\n", err)
			return 2
		}
	}
	compare.WriteText(stdout, res)
	if res.Failed() {
		return 1
	}
	return 0
}

func gateCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("gate", "REPORT.json [--policy gate.yaml]", `  sandcheck gate out/release/report.json --policy gate.yaml

Which findings the gate accepts: only the known findings its policy names by id (accept_known);
any other fail-open observation blocks, known or not, because a release must not pass one
silently. run accepts every known finding (it reports what is new) and preflight the fail-closed
ones; all three decide by one rule (docs/adversarial.md).

Output: blockers (fail-open first, then harness errors and timeouts above the bound, then missing
cells or scenarios), fail-closed bounds, insufficient evidence (one line per cell: measured trials
held / needed), the known findings the policy accepts (accept_known), then one PASS or FAIL line.
Exit codes: 0 pass; 1 any blocker, fail-closed bound or insufficient evidence; 2 a usage, policy
or report error.`, stderr)
	policy := fs.String("policy", "", "gate policy YAML (default: no fail-open anywhere, known findings included; fail-closed 95% upper bound 5%; harness errors + timeouts <= 5% of a cell; 73 measured trials per scenario)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "sandcheck gate: need one report.json")
		return 2
	}
	res, err := gate.File(fs.Arg(0), *policy)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck gate: %v\n", err)
		return 2
	}
	if err := gate.WriteText(stdout, res); err != nil {
		fmt.Fprintf(stderr, "sandcheck gate: %v\n", err)
		return 2
	}
	if res.Failed() {
		return 1
	}
	return 0
}
