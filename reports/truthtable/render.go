package truthtable

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// TerminalOptions tune the terminal rendering. The zero value is the default.
type TerminalOptions struct {
	// Width is the terminal's width; 0 means 120. Columns that do not fit are continued in
	// another block with the same rows.
	Width int
	// AllRows shows the rows in which every cell is right too; by default they are counted.
	AllRows bool
}

// wrongMark prefixes a wrong cell in the terminal.
const wrongMark = "X "

// WriteTerminal writes the truth tables of the report's cells (cells: the run's, in its order;
// nil: every cell of the report) for a terminal: trial groups as numbered columns named below
// the table, rows in which every cell is right counted instead of shown, one count line per
// table. It writes nothing when no cell ran a network channel or bypass scenario.
func WriteTerminal(w io.Writer, rep *schema.Report, cells []model.Cell, opts TerminalOptions) error {
	if opts.Width <= 0 {
		opts.Width = 120
	}
	bw := bufio.NewWriter(w)
	for _, t := range Build(rep, cells) {
		writeTerminalTable(bw, t, opts)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write truth tables: %w", err)
	}
	return nil
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-width(s))) }

func terminalText(c Cell) string {
	if c.Mark == Wrong {
		return wrongMark + c.Text()
	}
	return c.Text()
}

func writeTerminalTable(w io.Writer, t Table, opts TerminalOptions) {
	fmt.Fprintln(w)
	for _, l := range wrap("Truth table, "+t.Title, opts.Width) {
		fmt.Fprintln(w, l)
	}
	var shown []Row
	hidden := 0
	for _, r := range t.Rows {
		if !opts.AllRows && r.AllRight() {
			hidden++
			continue
		}
		shown = append(shown, r)
	}
	caseW, expW := width("case"), width("expected")
	for _, r := range shown {
		caseW, expW = max(caseW, width(r.Case)), max(expW, width(r.Expected))
	}
	colW := make([]int, len(t.Columns))
	for i := range t.Columns {
		colW[i] = width(fmt.Sprintf("[%d]", i+1))
		for _, r := range shown {
			colW[i] = max(colW[i], width(terminalText(r.Cells[i])))
		}
	}
	const gap = 2
	if len(shown) > 0 {
		// Columns in blocks that fit the width; each block repeats the case and expectation.
		for start := 0; start < len(t.Columns); {
			end, used := start, caseW+gap+expW
			for end < len(t.Columns) && (end == start || used+gap+colW[end] <= opts.Width) {
				used += gap + colW[end]
				end++
			}
			if start > 0 {
				fmt.Fprintln(w)
			}
			line := pad("case", caseW+gap) + pad("expected", expW)
			for i := start; i < end; i++ {
				line += strings.Repeat(" ", gap) + pad(fmt.Sprintf("[%d]", i+1), colW[i])
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			for _, r := range shown {
				line := pad(r.Case, caseW+gap) + pad(r.Expected, expW)
				for i := start; i < end; i++ {
					line += strings.Repeat(" ", gap) + pad(terminalText(r.Cells[i]), colW[i])
				}
				fmt.Fprintln(w, strings.TrimRight(line, " "))
			}
			start = end
		}
	}
	switch {
	case hidden > 0 && len(shown) == 0:
		fmt.Fprintf(w, "(all %d rows right in every column)\n", hidden)
	case hidden == 1:
		fmt.Fprintln(w, "(1 more row right in every column, not shown)")
	case hidden > 0:
		fmt.Fprintf(w, "(%d more rows right in every column, not shown)\n", hidden)
	}
	for i, c := range t.Columns {
		fmt.Fprintf(w, "[%d] %s\n", i+1, c.Name())
	}
	fmt.Fprintln(w, t.Count())
}

// wrap breaks a line at spaces so that no piece is wider than n (a word wider than n stays whole).
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case width(line)+1+width(word) <= n:
			line += " " + word
		default:
			out = append(out, line)
			line = "  " + word
		}
	}
	return append(out, line)
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "\n", " ", "\r", " ").Replace(s)
}

// WriteMarkdown writes the report's truth tables as a report.md section (heading level 2), every
// row shown; nothing when there are none.
func WriteMarkdown(w io.Writer, rep *schema.Report) error {
	tables := Build(rep, nil)
	if len(tables) == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("## Truth tables\n\nEach row is a case, the policy's expectation beside it; each column a trial group. %s\n\n", mdCell(Legend))
	for _, t := range tables {
		p("### Truth table, %s\n\n| case | expected |", mdCell(t.Title))
		for _, c := range t.Columns {
			p(" %s |", mdCell(c.Name()))
		}
		p("\n|---|---|%s\n", strings.Repeat("---|", len(t.Columns)))
		for _, r := range t.Rows {
			p("| %s | %s |", mdCell(r.Case), mdCell(r.Expected))
			for _, c := range r.Cells {
				if c.Mark == Wrong {
					p(" **✗ %s** |", mdCell(c.Text()))
				} else {
					p(" %s |", mdCell(c.Text()))
				}
			}
			p("\n")
		}
		p("\n%s\n\n", t.Count())
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write truth tables: %w", err)
	}
	return nil
}

//go:embed truthtable.html.tmpl
var htmlSource string

// html/template escapes every name and word by context.
var htmlTmpl = template.Must(template.New("truthtable").Parse(htmlSource))

// Style is the CSS of the HTML rendering, for the page's <style>.
const Style = `
table.truth { border-collapse: collapse; margin: 6px 0; }
table.truth td, table.truth th { border: 1px solid #ddd; padding: 2px 8px; font-size: 12px; white-space: nowrap; }
table.truth th.case { text-align: left; font-weight: normal; font-family: ui-monospace, monospace; }
table.truth td.tt-right { background: #e8f5e9; }
table.truth td.tt-wrong { background: #ffcdd2; font-weight: bold; outline: 2px solid #c62828; outline-offset: -2px; }
table.truth td.tt-na, table.truth td.tt-notrun { color: #9e9e9e; }
table.truth td.tt-unjudged { background: #eceff1; }
p.tt-count { font-weight: bold; }
`

type htmlTable struct {
	Title   string
	Columns []string
	Rows    []htmlRow
	Count   string
	Wrong   int
}

type htmlRow struct {
	Case, Expected string
	Cells          []htmlCell
}

type htmlCell struct{ Class, Text, Title string }

var markClass = map[Mark]string{Right: "tt-right", Wrong: "tt-wrong", NotApplicable: "tt-na", Unjudged: "tt-unjudged", NotRun: "tt-notrun"}

// HTML renders the report's truth tables as a fragment of report.html (its CSS is Style); ""
// when there are none.
func HTML(rep *schema.Report) (template.HTML, error) {
	tables := Build(rep, nil)
	if len(tables) == 0 {
		return "", nil
	}
	var views []htmlTable
	for _, t := range tables {
		v := htmlTable{Title: "Truth table, " + t.Title, Count: t.Count().String(), Wrong: t.Count().Wrong}
		for _, c := range t.Columns {
			v.Columns = append(v.Columns, c.Name())
		}
		for _, r := range t.Rows {
			hr := htmlRow{Case: r.Case, Expected: r.Expected}
			for i, c := range r.Cells {
				text := c.Text()
				if c.Mark == Wrong {
					text = "✗ " + text
				}
				hr.Cells = append(hr.Cells, htmlCell{Class: markClass[c.Mark], Text: text,
					Title: fmt.Sprintf("%s in %s: expected %s", r.Case, t.Columns[i].Name(), r.Expected)})
			}
			v.Rows = append(v.Rows, hr)
		}
		views = append(views, v)
	}
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, struct {
		Legend string
		Tables []htmlTable
	}{Legend, views}); err != nil {
		return "", fmt.Errorf("render truth tables: %w", err)
	}
	return template.HTML(buf.String()), nil // html/template escaped every word above
}
