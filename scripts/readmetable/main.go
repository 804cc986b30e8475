// Command readmetable prints the README's sandbox x scenario table from `sandcheck run` reports:
// readmetable TARGET=RUNDIR ... (each RUNDIR holding the report.json of one healthy run);
// readmetable -bypass TARGET=RUNDIR ... prints the bypass class x target table (bypass.go).
// scripts/readme-table.sh runs the sandboxes and calls it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/adapters"
)

// groups are the table's columns: a scenario's first path element.
var groups = []struct{ key, title string }{
	{"network", "network"}, {"filesystem", "filesystem"}, {"failclosed", "fail-closed"}, {"untrusted", "untrusted"},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: readmetable [-bypass] TARGET=RUNDIR ...")
		os.Exit(2)
	}
	table, args := scenarioTable, os.Args[1:]
	if os.Args[1] == "-bypass" {
		table, args = bypassTable, os.Args[2:]
	}
	runs, err := readRuns(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readmetable:", err)
		os.Exit(1)
	}
	fmt.Print(table(runs))
}

// run is one target's healthy run: a row of the scenario table, a column of the bypass table.
type run struct {
	name string
	rep  *schema.Report
}

// readRuns reads the report.json of each TARGET=RUNDIR argument.
func readRuns(args []string) ([]run, error) {
	var runs []run
	for _, arg := range args {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want TARGET=RUNDIR", arg)
		}
		rep, err := schema.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			return nil, err
		}
		runs = append(runs, run{name, rep})
	}
	return runs, nil
}

// scenarioTable renders the sandbox x scenario group table: a row per run.
func scenarioTable(runs []run) string {
	var b strings.Builder
	b.WriteString("| sandbox | version | trials |")
	for _, g := range groups {
		b.WriteString(" " + g.title + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(groups)) + "\n")
	for _, r := range runs {
		version := "?"
		if t, err := targets.New(r.name, map[string]string{}); err == nil {
			version = t.Version()
		}
		trials := 0
		for _, o := range r.rep.Overall {
			if o.Fault == "" && o.Trials > trials {
				trials = o.Trials
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", r.name, version, trials)
		for _, g := range groups {
			b.WriteString(" " + cell(r.rep, g.key) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cell summarizes one sandbox's specs of one group: how many passed in every trial, how many are
// not-applicable to it, and each failing spec with its outcomes.
func cell(rep *schema.Report, group string) string {
	var t tally
	for _, c := range rep.Cells {
		if c.Fault != "" || !strings.HasPrefix(c.Scenario, group+"/") {
			continue
		}
		t.count(c, group+"/", false)
	}
	return t.render(" specs")
}
