package main

import (
	"fmt"
	"slices"
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

// bypassCell summarizes one target's cases of one class; an information class's cell is what it
// read instead (infoCell), when every trial of it was read.
func bypassCell(rep *schema.Report, target, class string) string {
	prefix := "bypass/" + class + "/"
	var t tally
	var cells []schema.Cell
	for _, c := range rep.Cells {
		if c.Fault != "" || c.Target != target || !strings.HasPrefix(c.Scenario, prefix) {
			continue
		}
		t.count(c, prefix, true)
		cells = append(cells, c)
	}
	if s := infoCell(cells, prefix); s != "" && len(t.fails) == 0 {
		return s
	}
	return t.render("")
}

// infoCell is the reading of an information class's scenarios ("processes: not limited (228
// processes started)"), from a passing trial's hint each; "" when they are not information.
func infoCell(cells []schema.Cell, prefix string) string {
	var parts []string
	for _, c := range cells {
		if !slices.Contains(c.ScenarioLabels, "info") {
			return ""
		}
		ex, ok := c.Examples["correct"]
		if !ok {
			parts = append(parts, strings.TrimPrefix(c.Scenario, prefix)+": n/a")
			continue
		}
		verdict, detail, _ := strings.Cut(ex.Hint, ": ")
		detail, _, _ = strings.Cut(detail, ", then")
		detail = strings.TrimSuffix(strings.Replace(detail, " (", ", ", 1), ")") // no parentheses in parentheses
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", strings.TrimPrefix(c.Scenario, prefix), verdict, detail))
	}
	if len(parts) == 0 {
		return ""
	}
	return "ℹ️ " + strings.Join(parts, "; ")
}
