package markdown

import (
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/versiontable"
)

// writeVersionTables writes the "Versions" section of report.md (nothing without tables).
func writeVersionTables(w io.Writer, rep *schema.Report) {
	tables := versiontable.Build(rep, 0)
	if len(tables) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("## Versions\n\n")
	p("Each cell: failure rate [Wilson 95%% CI] and the failing outcome. %s the failure rate rose, %s it fell, %s a different outcome in every trial, "+
		"against the previous version the scenario ran in; **bold** when significant (one-sided Fisher exact test, alpha %g), plain when every trial "+
		"changed but there are too few to be sure. A column \"A … B (n)\" stands for n adjacent versions whose every cell reads the same "+
		"(each version's own counts, not pooled).\n\n", wording.MarkWorse, wording.MarkBetter, wording.MarkOutcome, versiontable.DefaultAlpha)
	for _, t := range tables {
		p("### %s: %d versions, %s .. %s\n\n", mdCell(wording.SeriesName(t.Series)), len(t.Versions), t.Versions[0], t.Versions[len(t.Versions)-1])
		if len(t.Rows) > 0 {
			// Adjacent versions that print alike in every row share a column.
			spans := t.Spans()
			p("| scenario |")
			for _, sp := range spans {
				p(" %s |", mdCell(sp.Label(t.Versions)))
			}
			p("\n|---|%s\n", strings.Repeat("---|", len(spans)))
			for _, r := range t.Rows {
				p("| %s |", mdCell(r.Scenario))
				for _, sp := range spans {
					c := r.Cells[sp.From]
					text := wording.ChangeMark(c.Change) + wording.VersionCellText(c)
					if c.Change != nil && c.Change.Significant {
						text = "**" + text + "**"
					}
					p(" %s |", mdCell(text))
				}
				p("\n")
			}
			p("\n")
		}
		if len(t.Steady) > 0 {
			p("%d scenario(s) passed in every version they ran in: %s.\n\n", len(t.Steady), mdCell(strings.Join(t.Steady, ", ")))
		}
		if len(t.Bands) > 0 {
			p("Versions whose trials say nothing per scenario:\n\n")
			for _, b := range t.Bands {
				what := "the sandbox failed to start in (nearly) every scenario"
				if b.Outcome == "not-applicable" {
					what = "the adapter cannot drive this build"
				}
				p("- **%s**: %s (%s, %d trials): %s\n", mdCell(b.Version), what, b.Outcome, b.Trials, mdCell(b.Hint))
			}
			p("\n")
		}
		if len(t.Changes) > 0 {
			p("Changes between adjacent versions (a regression names the first version it appears in):\n\n")
			for _, c := range t.Changes {
				p("- %s\n", mdCell(c.String()))
			}
			p("\n")
		} else {
			p("No scenario changed between adjacent versions.\n\n")
		}
	}
}
