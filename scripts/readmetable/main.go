// Command readmetable prints the README's sandbox x scenario table from `sandcheck run` reports:
// readmetable TARGET=RUNDIR ... (each RUNDIR holding the report.json of one healthy run);
// readmetable -bypass TARGET=RUNDIR ... prints the bypass class x target table (bypass.go).
// scripts/readme-table.sh runs the sandboxes and calls it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/bwrap"
	_ "github.com/sandcheck/sandcheck/targets/codex"
	_ "github.com/sandcheck/sandcheck/targets/command"
	_ "github.com/sandcheck/sandcheck/targets/firejail"
	_ "github.com/sandcheck/sandcheck/targets/srt"
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
	if os.Args[1] == "-bypass" {
		if err := bypassTable(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "readmetable:", err)
			os.Exit(1)
		}
		return
	}
	var b strings.Builder
	b.WriteString("| sandbox | version | trials |")
	for _, g := range groups {
		b.WriteString(" " + g.title + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(groups)) + "\n")
	for _, arg := range os.Args[1:] {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "readmetable: %q: want TARGET=RUNDIR\n", arg)
			os.Exit(2)
		}
		rep, err := schema.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "readmetable: %v\n", err)
			os.Exit(1)
		}
		version := "?"
		if t, err := targets.New(name, map[string]string{}); err == nil {
			version = t.Version()
		}
		trials := 0
		for _, o := range rep.Overall {
			if o.Fault == "" && o.Trials > trials {
				trials = o.Trials
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", name, version, trials)
		for _, g := range groups {
			b.WriteString(" " + cell(rep, g.key) + " |")
		}
		b.WriteString("\n")
	}
	fmt.Print(b.String())
}

// cell summarizes one sandbox's specs of one group: how many passed in every trial, how many are
// not-applicable to it, and each failing spec with its outcomes.
func cell(rep *schema.Report, group string) string {
	pass, na, total := 0, 0, 0
	var fails []string
	for _, c := range rep.Cells {
		if c.Fault != "" || !strings.HasPrefix(c.Scenario, group+"/") {
			continue
		}
		total++
		switch {
		case c.Trials > 0 && c.Outcomes["not-applicable"] == c.Trials:
			na++
		case c.Failures == 0 && c.Measured == c.Trials:
			pass++
		default:
			var outs []string
			for o, n := range c.Outcomes {
				outs = append(outs, fmt.Sprintf("%s %d/%d", o, n, c.Trials))
			}
			sort.Strings(outs)
			fails = append(fails, fmt.Sprintf("`%s` %s", strings.TrimPrefix(c.Scenario, group+"/"), strings.Join(outs, ", ")))
		}
	}
	if total == 0 {
		return "not run"
	}
	if pass+len(fails) == 0 {
		return fmt.Sprintf("n/a (%d specs)", na)
	}
	s := fmt.Sprintf("%d/%d pass", pass, pass+len(fails))
	if len(fails) == 0 {
		s = "✅ " + s
	} else {
		s = "❌ " + s + ": " + strings.Join(fails, "; ")
	}
	if na > 0 {
		s += fmt.Sprintf(" (%d n/a)", na)
	}
	return s
}
