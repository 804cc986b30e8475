package format

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/versiontable"
	"github.com/sandcheck/sandcheck/versions"
)

// The version x scenario tables of a report (reports/versiontable): one per target, host, fault
// and labels seen at several versions.

// Marks on a cell that changed against the previous version it ran in.
const (
	markWorse   = "▲"
	markBetter  = "▼"
	markOutcome = "◆"
)

func changeMark(c *versiontable.Change) string {
	if c == nil {
		return ""
	}
	switch c.Kind {
	case versiontable.KindWorse:
		return markWorse
	case versiontable.KindBetter:
		return markBetter
	}
	return markOutcome
}

// seriesName is "srt on local" plus the fault and labels when set.
func seriesName(r schema.CellRef) string {
	s := r.Target + " on " + r.Host
	if r.Fault != "" {
		s += ", fault " + r.Fault
	}
	if r.Labels != "" {
		s += " [" + r.Labels + "]"
	}
	return s
}

// pct0 is a whole percentage: the version table's cells are narrow.
func pct0(r float64) string { return fmt.Sprintf("%.0f%%", math.Round(100*r)) }

// vtCellText is one cell: the failure rate and its Wilson interval, then the failing outcome.
func vtCellText(c versiontable.Cell) string {
	switch {
	case c.Band == "not-applicable":
		return "n/a (not driven)"
	case c.Band != "":
		return c.Band + " (band)"
	case !c.Has:
		return "—"
	case c.Measured == 0:
		return "n/a"
	}
	s := fmt.Sprintf("%s [%s–%s]", pct0(c.Rate), strings.TrimSuffix(pct0(c.CI[0]), "%"), pct0(c.CI[1]))
	if c.Failures > 0 {
		s += " " + c.Failing
		if c.FailOpen {
			s += " OPEN"
		}
		if c.Known {
			s += " (known)"
		}
	}
	return s
}

// writeVersionTablesMD writes the "Versions" section of report.md (nothing without tables).
func writeVersionTablesMD(w io.Writer, rep *schema.Report) {
	tables := versiontable.Build(rep, 0)
	if len(tables) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("## Versions\n\n")
	p("Each cell: failure rate [Wilson 95%% CI] and the failing outcome. %s the failure rate rose, %s it fell, %s a different outcome in every trial, "+
		"against the previous version the scenario ran in; **bold** when significant (one-sided Fisher exact test, alpha %g), plain when every trial "+
		"changed but there are too few to be sure. A column \"A … B (n)\" stands for n adjacent versions whose every cell reads the same "+
		"(each version's own counts, not pooled).\n\n", markWorse, markBetter, markOutcome, versiontable.DefaultAlpha)
	for _, t := range tables {
		p("### %s: %d versions, %s .. %s\n\n", mdCell(seriesName(t.Series)), len(t.Versions), t.Versions[0], t.Versions[len(t.Versions)-1])
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
					text := changeMark(c.Change) + vtCellText(c)
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

// HTML view of the version tables.
type vtView struct {
	Name     string
	Versions []vtHead
	Rows     []vtRowView
	Steady   string
	Bands    []string
	Changes  []vtChangeView
}

type vtHead struct {
	Version string
	Band    string // "" or the band outcome
}

type vtRowView struct {
	Scenario string
	Cells    []vtCellView
}

type vtCellView struct {
	Version, Text, CI, Title, Color, Class, Mark string
}

type vtChangeView struct {
	Kind, Text  string
	Significant bool
}

func versionViews(rep *schema.Report) []vtView {
	var out []vtView
	for _, t := range versiontable.Build(rep, 0) {
		v := vtView{Name: fmt.Sprintf("%s: %d versions, %s .. %s", seriesName(t.Series), len(t.Versions), t.Versions[0], t.Versions[len(t.Versions)-1])}
		bands := map[string]string{}
		for _, b := range t.Bands {
			bands[b.Version] = b.Outcome
			v.Bands = append(v.Bands, fmt.Sprintf("%s: %s in %d trials: %s", b.Version, b.Outcome, b.Trials, b.Hint))
		}
		spans := t.Spans()
		for _, sp := range spans {
			v.Versions = append(v.Versions, vtHead{Version: sp.Label(t.Versions), Band: bands[t.Versions[sp.From]]})
		}
		for _, r := range t.Rows {
			rv := vtRowView{Scenario: r.Scenario}
			for _, sp := range spans {
				c := r.Cells[sp.From]
				cv := vtCellView{Version: sp.Label(t.Versions), Text: vtCellText(c), Mark: changeMark(c.Change)}
				if c.Has && c.Band == "" && c.Measured > 0 {
					// Two lines in a narrow cell: the rate and what failed, then the interval.
					cv.Text, cv.CI = strings.Replace(vtCellText(c), " ["+strings.TrimSuffix(pct0(c.CI[0]), "%")+"–"+pct0(c.CI[1])+"]", "", 1),
						fmt.Sprintf("[%s–%s]", strings.TrimSuffix(pct0(c.CI[0]), "%"), pct0(c.CI[1]))
				}
				switch {
				case c.Band != "":
					cv.Color, cv.Class = colorOf(c.Band), "band"
				case !c.Has || c.Measured == 0:
					cv.Color = "#f5f5f5"
				case c.FailOpen:
					cv.Color, cv.Class = colorOf("non-enforcing"), "open"
				default:
					cv.Color = rateColor(c.Rate)
				}
				if c.Has {
					cv.Title = fmt.Sprintf("%s at %s: %d of %d measured trials failed; outcomes %s", r.Scenario, sp.Label(t.Versions), c.Failures, c.Measured,
						schema.OutcomeList(c.Outcomes, allOrder))
				}
				if c.Change != nil {
					cv.Class += " chg chg-" + c.Change.Kind
					if c.Change.Significant {
						cv.Class += " sig"
					}
					cv.Title += "; " + c.Change.String()
				}
				rv.Cells = append(rv.Cells, cv)
			}
			v.Rows = append(v.Rows, rv)
		}
		if len(t.Steady) > 0 {
			v.Steady = fmt.Sprintf("%d scenario(s) passed in every version they ran in: %s.", len(t.Steady), strings.Join(t.Steady, ", "))
		}
		for _, c := range t.Changes {
			v.Changes = append(v.Changes, vtChangeView{Kind: c.Kind, Text: c.String(), Significant: c.Significant})
		}
		out = append(out, v)
	}
	return out
}

// hostEnv is a host's environment table. On a host whose cells ran chosen versions, the one
// fingerprint kept per host names only the first trial's build: the sandbox row says which
// versions ran instead.
func hostEnv(rep *schema.Report, host string) [][2]string {
	rows := envTable(rep.Hosts[host])
	byTarget := map[string][]string{}
	var names []string
	for _, o := range rep.Overall {
		if o.Host != host || o.Version == "" {
			continue
		}
		if _, ok := byTarget[o.Target]; !ok {
			names = append(names, o.Target)
		}
		byTarget[o.Target] = append(byTarget[o.Target], o.Version)
	}
	if len(names) == 0 {
		return rows
	}
	var parts []string
	for _, n := range names {
		vs := versions.Sorted(byTarget[n])
		if len(vs) == 1 {
			parts = append(parts, n+" "+vs[0])
		} else {
			parts = append(parts, fmt.Sprintf("%s %s … %s (%d versions)", n, vs[0], vs[len(vs)-1], len(vs)))
		}
	}
	val := "per cell: " + strings.Join(parts, "; ")
	for i, r := range rows {
		if r[0] == "sandbox" {
			rows[i][1] = val
			return rows
		}
	}
	return append(rows, [2]string{"sandbox", val})
}
