package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// bypassClasses are the rows of the bypass table, in the order the issue lists them.
var bypassClasses = []string{"matching", "ports", "resolved-address", "unix-sockets", "other-egress", "policy-semantics", "tty", "fs-interplay"}

// bypassTable prints the bypass class x target table: per class and target, how many of the
// class's cases passed in every trial, the failing ones with their outcomes (known findings
// marked), and how many were not applicable.
func bypassTable(args []string) error {
	type col struct {
		name string
		rep  *schema.Report
	}
	var cols []col
	for _, arg := range args {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want TARGET=RUNDIR", arg)
		}
		rep, err := schema.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			return err
		}
		cols = append(cols, col{name, rep})
	}
	var b strings.Builder
	b.WriteString("| bypass class |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, class := range bypassClasses {
		fmt.Fprintf(&b, "| `%s` |", class)
		for _, c := range cols {
			b.WriteString(" " + bypassCell(c.rep, c.name, class) + " |")
		}
		b.WriteString("\n")
	}
	fmt.Print(b.String())
	return nil
}

// bypassCell summarizes one target's cases of one class.
func bypassCell(rep *schema.Report, target, class string) string {
	prefix := "bypass/" + class + "/"
	pass, na, total := 0, 0, 0
	var fails []string
	for _, c := range rep.Cells {
		if c.Fault != "" || c.Target != target || !strings.HasPrefix(c.Scenario, prefix) {
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
			f := fmt.Sprintf("`%s` %s", strings.TrimPrefix(c.Scenario, prefix), strings.Join(outs, ", "))
			if c.Failures > 0 && c.KnownFailures() == c.Failures {
				f += " (known)"
			}
			fails = append(fails, f)
		}
	}
	switch {
	case total == 0:
		return "not run"
	case pass+len(fails) == 0:
		return fmt.Sprintf("n/a (%d)", na)
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
