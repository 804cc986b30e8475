package htmlpage

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/versiontable"
)

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
		v := vtView{Name: fmt.Sprintf("%s: %d versions, %s .. %s", wording.SeriesName(t.Series), len(t.Versions), t.Versions[0], t.Versions[len(t.Versions)-1])}
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
				cv := vtCellView{Version: sp.Label(t.Versions), Text: wording.VersionCellText(c), Mark: wording.ChangeMark(c.Change)}
				if c.Has && c.Band == "" && c.Measured > 0 {
					// Two lines in a narrow cell: the rate and what failed, then the interval.
					cv.Text, cv.CI = strings.Replace(wording.VersionCellText(c), " ["+strings.TrimSuffix(wording.Pct0(c.CI[0]), "%")+"–"+wording.Pct0(c.CI[1])+"]", "", 1),
						fmt.Sprintf("[%s–%s]", strings.TrimSuffix(wording.Pct0(c.CI[0]), "%"), wording.Pct0(c.CI[1]))
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
						schema.OutcomeList(c.Outcomes, wording.AllOrder))
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
