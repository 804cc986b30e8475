// Package htmlpage writes report.html: one self-contained page (inline CSS, JS and SVG; no
// network) with outcome bars and interval whiskers per cell, a cell x scenario heat map, the
// version tables and expandable evidence.
package htmlpage

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/truthtable"
)

//go:embed report.html.tmpl
var htmlSource string

// html/template escapes every probe output by context; nothing reaches the page unescaped.
var htmlTmpl = template.Must(template.New("report").Parse(htmlSource))

// outcomeColors are fixed so pages from different runs read alike. Fail-open is purple, not red:
// it must never be mistaken for "just another failure".
var outcomeColors = map[string]string{
	"correct":         "#2e7d32",
	"non-enforcing":   "#6a1b9a",
	"proxy-dead":      "#c62828",
	"allowed-blocked": "#ef6c00",
	"sandbox-failed":  "#8d6e63",
	"residue":         "#f9a825",
	"timeout":         "#546e7a",
	"harness-error":   "#90a4ae",
	"not-applicable":  "#cfd8dc",
}

func colorOf(o string) string {
	if c, ok := outcomeColors[o]; ok {
		return c
	}
	return "#212121"
}

const barWidth = 400.0

type htmlView struct {
	Title, Generated, Version, RunIDs, Until string
	Heat                                     heatMap
	Cells                                    []cellView
	Hosts                                    []hostView
	Legend                                   []legendItem
	CoFail                                   []string
	Settings, SettingsNote, Repro, Expected  string
	NoTrials                                 bool
	VersionTables                            []vtView
	TruthTables                              template.HTML // rendered by reports/truthtable
	TruthStyle                               template.CSS
}

// heatMap is the cell x scenario grid, laid out so that the longer of the two lists runs down
// the page and the shorter across it, with rotated headings: one cell of fifty scenarios and
// three hundred cells of one scenario both read as a tall table, not a strip off the screen.
type heatMap struct {
	Down   string // what the rows are: "cells" or "scenarios"
	Corner string
	Cols   []heatHead
	Rows   []heatRow
	Rotate bool // many columns: headings turned upright
	Scroll bool // many rows: the table scrolls in a box under sticky headings
}

type heatHead struct{ Label, Title, Anchor string }

type legendItem struct{ Name, Color, Severity string }

type heatRow struct {
	Name, Title, Anchor, CellID, Scenario string
	Cells                                 []heatCell
}

type heatCell struct {
	CellID, Scenario, Color, Text, Title string
	Has, FailOpen, Known                 bool
}

type cellView struct {
	Anchor, CellID, Name, Verdict string
	FailOpen                      bool
	Breached                      []string // what the fail-open trials let through, per scenario
	Bars                          []barView
	Clean                         []cleanView // scenarios with nothing to show but a pass
	Examples                      []exView
}

// cleanView is a scenario that passed in every trial with nothing to note: one line, no bar.
type cleanView struct{ Label, Verdict string }

type barView struct {
	Label, Verdict, Kind string // Kind: "overall" or "scenario"
	Details              []string
	Known, Fixed         string
	Segs                 []seg
	Measured             bool
	Rate, Lo, Hi         float64 // x positions in px
	RateText             string
}

type seg struct {
	X, W         float64
	Color, Title string
}

type exView struct {
	Outcome, Color, Summary, Error, Evidence string
}

type hostView struct {
	Name string
	Rows [][2]string
}

var nonAnchor = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Write writes report.html: one self-contained page (inline CSS, JS and SVG; no network) with
// outcome bars and CI whiskers per cell, a cell x scenario heat map and expandable evidence.
func Write(w io.Writer, rep *schema.Report, opts wording.Options) error {
	v := htmlView{
		Title:        wording.Title(rep, opts),
		Generated:    rep.GeneratedAt.Format("2006-01-02 15:04:05Z07:00"),
		Version:      wording.OrUnknown(rep.SandcheckVersion),
		RunIDs:       strings.Join(rep.RunIDs, ", "),
		Settings:     opts.Settings,
		SettingsNote: wording.SettingsNote(opts.SettingsOf),
		Repro:        opts.Repro,
		Expected:     wording.OrDefault(opts.Expected, wording.DefaultExpected),
		NoTrials:     len(rep.Overall) == 0,
	}
	if rep.Until != nil {
		v.Until = fmt.Sprintf("SPRT %s, alpha %g, beta %g, max %d", rep.Until.Hypotheses, rep.Until.Alpha, rep.Until.Beta, rep.Until.Max)
	}
	for _, o := range wording.AllOrder {
		v.Legend = append(v.Legend, legendItem{o, colorOf(o), wording.SeverityOf(o)})
	}
	var scenarios []string
	rowsOf := map[string]map[string]schema.Cell{} // cell ID -> scenario -> row
	for _, c := range rep.Cells {
		rows := rowsOf[c.CellID]
		if rows == nil {
			rows = map[string]schema.Cell{}
			rowsOf[c.CellID] = rows
		}
		rows[c.Scenario] = c
	}
	seen := map[string]bool{}
	for _, c := range rep.Cells {
		if !seen[c.Scenario] {
			seen[c.Scenario] = true
			scenarios = append(scenarios, c.Scenario)
		}
	}
	sort.Strings(scenarios)
	anchors := make([]string, len(rep.Overall))
	for i, o := range rep.Overall {
		anchors[i] = fmt.Sprintf("cell-%d-%s", i, nonAnchor.ReplaceAllString(o.CellID, "-"))
	}
	v.Heat = heatGrid(rep, scenarios, rowsOf, anchors)

	for i, o := range rep.Overall {
		rows := rowsOf[o.CellID]
		cv := cellView{Anchor: anchors[i], CellID: o.CellID, Name: o.Name(), Verdict: wording.Verdict(o.Counts) + wording.Pace(o.Counts, "; "), FailOpen: o.FailOpen > 0}
		if cv.FailOpen {
			cv.Breached = wording.FailOpenWhat(rep, o)
		}
		cv.Bars = append(cv.Bars, bar("all scenarios (per trial)", "overall", o.Counts))
		for _, s := range scenarios {
			c, ok := rows[s]
			switch {
			case !ok:
			case wording.Clean(c.Counts):
				cv.Clean = append(cv.Clean, cleanView{Label: s, Verdict: wording.Verdict(c.Counts)})
			default:
				cv.Bars = append(cv.Bars, bar(s, "scenario", c.Counts))
			}
		}
		for _, name := range wording.OutcomeOrder(o.Outcomes) {
			ex, ok := o.Examples[name]
			if !ok {
				continue
			}
			sum := fmt.Sprintf("%s x%d · example trial %d (run %s)", name, o.Outcomes[name], ex.Trial, ex.RunID)
			if ex.Hint != "" {
				sum += " — " + ex.Hint
			}
			cv.Examples = append(cv.Examples, exView{Outcome: name, Color: colorOf(name), Summary: sum, Error: ex.Error, Evidence: wording.ExampleEvidence(rep, ex, wording.PageEvidenceBytes, opts.KnownEvidence)})
		}
		v.Cells = append(v.Cells, cv)
	}
	for _, h := range wording.HostNames(rep) {
		v.Hosts = append(v.Hosts, hostView{Name: h, Rows: wording.HostEnv(rep, h)})
	}
	v.VersionTables = versionViews(rep)
	tt, err := truthtable.HTML(rep)
	if err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	v.TruthTables, v.TruthStyle = tt, template.CSS(truthtable.Style)
	for _, cf := range rep.CoFailures {
		for _, g := range cf.Groups {
			v.CoFail = append(v.CoFail, fmt.Sprintf("%s: %s failed together in %d of %d trials (likely one cause)", cf.Name(), strings.Join(g.Scenarios, ", "), g.Failures, cf.Trials))
		}
	}
	if err := htmlTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}

// heatGrid lays the heat map out: the longer of cells and scenarios down the page.
func heatGrid(rep *schema.Report, scenarios []string, rowsOf map[string]map[string]schema.Cell, anchors []string) heatMap {
	h := heatMap{Down: "cells", Corner: "cell ↓ · scenario →"}
	if len(scenarios) > len(rep.Overall) {
		h.Down, h.Corner = "scenarios", "scenario ↓ · cell →"
	}
	if h.Down == "cells" {
		for _, s := range scenarios {
			h.Cols = append(h.Cols, heatHead{Label: s, Title: s})
		}
		for i, o := range rep.Overall {
			hr := heatRow{Name: o.Name(), Title: o.Name(), Anchor: anchors[i], CellID: o.CellID}
			for _, s := range scenarios {
				c, ok := rowsOf[o.CellID][s]
				hr.Cells = append(hr.Cells, heat(o.CellID, s, c, ok))
			}
			h.Rows = append(h.Rows, hr)
		}
	} else {
		for i, o := range rep.Overall {
			h.Cols = append(h.Cols, heatHead{Label: o.Name(), Title: o.Name(), Anchor: anchors[i]})
		}
		for _, s := range scenarios {
			hr := heatRow{Name: s, Title: s, Scenario: s}
			for _, o := range rep.Overall {
				c, ok := rowsOf[o.CellID][s]
				hr.Cells = append(hr.Cells, heat(o.CellID, s, c, ok))
			}
			h.Rows = append(h.Rows, hr)
		}
	}
	h.Rotate = len(h.Cols) > 6
	h.Scroll = len(h.Rows) > 40
	return h
}

func heat(cellID, s string, c schema.Cell, ok bool) heatCell {
	h := heatCell{CellID: cellID, Scenario: s, Has: ok}
	switch {
	case !ok:
		h.Color, h.Text, h.Title = "#ffffff", "", "not run in this cell"
	case c.FailOpen > 0:
		h.Color, h.Text, h.FailOpen = "#6a1b9a", "OPEN", true
		h.Title = "fail-open: " + wording.Verdict(c.Counts) + ": " + c.Breached()
		if c.KnownFailures() == c.Failures {
			// Still purple: a known fail-open is fail-open. The mark only says it is on the list.
			h.Text, h.Known = "OPEN (known)", true
			h.Title += "; " + wording.KnownNote(c.Counts)
		}
	case c.Failures > 0 && c.KnownFailures() == c.Failures:
		h.Color, h.Text, h.Known = rateColor(c.FailureRate), wording.Pct(c.FailureRate)+" (known)", true
		h.Title = wording.Verdict(c.Counts) + "; " + wording.KnownNote(c.Counts)
	case c.Measured == 0:
		h.Color, h.Text, h.Title = "#e0e0e0", "n/m", wording.Verdict(c.Counts)
	default:
		h.Color, h.Text, h.Title = rateColor(c.FailureRate), wording.Pct(c.FailureRate), wording.Verdict(c.Counts)
	}
	return h
}

// rateColor maps a failure rate to light green (0) through amber to red (1). The square root
// stretches the low end, where the interesting flake rates (0.5%-5%) live.
func rateColor(r float64) string {
	if r <= 0 {
		return "#a5d6a7"
	}
	t := math.Sqrt(math.Min(1, r))
	from, to := [3]float64{0xff, 0xe0, 0x82}, [3]float64{0xc6, 0x28, 0x28}
	var c [3]int
	for i := range c {
		c[i] = int(math.Round(from[i] + (to[i]-from[i])*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

func bar(label, kind string, c schema.Counts) barView {
	b := barView{Label: label, Kind: kind, Verdict: wording.Verdict(c), Measured: c.Measured > 0}
	if kind == "scenario" {
		// The overall bar repeats none of this: the cell's breach list and its scenario bars say it.
		b.Known, b.Fixed = wording.KnownNote(c), wording.FixedNote(c)
		if c.FailOpen > 0 {
			b.Details = append(b.Details, "breached: "+c.Breached())
		}
	}
	x := 0.0
	for _, o := range wording.OutcomeOrder(c.Outcomes) {
		n := c.Outcomes[o]
		if n == 0 || c.Trials == 0 {
			continue
		}
		w := barWidth * float64(n) / float64(c.Trials)
		b.Segs = append(b.Segs, seg{X: round1(x), W: round1(w), Color: colorOf(o), Title: fmt.Sprintf("%s: %d of %d trials", o, n, c.Trials)})
		x += w
	}
	b.Rate, b.Lo, b.Hi = round1(barWidth*c.FailureRate), round1(barWidth*c.CI95[0]), round1(barWidth*c.CI95[1])
	b.RateText = fmt.Sprintf("failure %s, 95%% CI %s", wording.Pct(c.FailureRate), wording.CIString(c.CI95))
	return b
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
