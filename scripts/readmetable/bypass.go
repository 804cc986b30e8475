package main

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// bypassClasses are the rows of the bypass table: every class a report holds a case of, in the
// order the reports first list them (the family's own order), so a new class needs no line here.
func bypassClasses(cols []run) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cols {
		for _, cell := range c.rep.Cells {
			rest, ok := strings.CutPrefix(cell.Scenario, "bypass/")
			class, _, _ := strings.Cut(rest, "/")
			if ok && !seen[class] {
				seen[class] = true
				out = append(out, class)
			}
		}
	}
	return out
}

// bypassTable renders the bypass class x target table: per class and target, how many of the
// class's cases passed in every trial, the failing ones with their outcomes (known findings
// marked), and how many were not applicable.
func bypassTable(cols []run) string {
	var b strings.Builder
	b.WriteString("| bypass class |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, class := range bypassClasses(cols) {
		fmt.Fprintf(&b, "| `%s` |", class)
		for _, c := range cols {
			b.WriteString(" " + bypassCell(c.rep, c.name, class) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// bypassCell summarizes one target's cases of one class.
func bypassCell(rep *schema.Report, target, class string) string {
	prefix := "bypass/" + class + "/"
	var t tally
	for _, c := range rep.Cells {
		if c.Fault != "" || c.Target != target || !strings.HasPrefix(c.Scenario, prefix) {
			continue
		}
		t.count(c, prefix, true)
	}
	return t.render("")
}
