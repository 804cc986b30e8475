package truthtable

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// mixedReport is the open-proxy fault beside a healthy srt and a deny-all bwrap, with bypass
// cases, one of them breached.
func mixedReport(t *testing.T) *schema.Report {
	bypass := func(cell model.Cell) []model.Record {
		return repeat(3, func(i int) model.Record {
			cases := map[string]channel{"bypass/matching/wildcard-apex": ok, "bypass/matching/nul": ok}
			if cell.Fault != "" && i > 0 {
				cases["bypass/matching/nul"] = channel{model.NonEnforcing, "connect:denied"}
			}
			return bypassTrial(cell, i, cases)
		})
	}
	h, o, d := healthySRT(3), openProxy(3), denyAll(3)
	h.trials = append(h.trials, bypass(srtCell)...)
	o.trials = append(o.trials, bypass(openProxyCell)...)
	return report(t, h, o, d)
}

func TestTerminalGolden(t *testing.T) {
	rep := mixedReport(t)
	var buf bytes.Buffer
	if err := WriteTerminal(&buf, rep, []model.Cell{srtCell, openProxyCell, bwrapCell}, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "terminal.golden", buf.String())
	for _, l := range strings.Split(buf.String(), "\n") {
		if width(l) > 120 {
			t.Errorf("line wider than 120 columns: %q", l)
		}
	}
	buf.Reset()
	if err := WriteTerminal(&buf, rep, []model.Cell{srtCell, openProxyCell}, TerminalOptions{AllRows: true, Width: 40}); err != nil {
		t.Fatal(err)
	}
	golden(t, "terminal-all-narrow.golden", buf.String())
}

// TestTerminalElides: rows right in every column are counted, not shown; every wrong one is.
func TestTerminalElides(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTerminal(&buf, report(t, healthySRT(2), openProxy(2)), nil, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"X REACHED 2/2", "(4 more rows right in every column, not shown)", "3 wrong, 0 not applicable, 14 right, 3 unjudged"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "denied direct") {
		t.Errorf("a row right everywhere is shown:\n%s", out)
	}
	buf.Reset()
	if err := WriteTerminal(&buf, report(t, healthySRT(2)), nil, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "(all 10 rows right in every column)") {
		t.Errorf("all right:\n%s", buf.String())
	}
}

func TestMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, mixedReport(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown.golden", buf.String())
}

// TestNothingToShow: a report without network channels or bypass cases has no truth table, and
// no rendering writes anything for it.
func TestNothingToShow(t *testing.T) {
	rep := report(t, cellRun{cell: srtCell, trials: []model.Record{{RunID: "r", Cell: srtCell, Outcome: model.Correct,
		Scenarios: []model.Scenario{{Name: "filesystem/isolation", Outcome: model.Correct, Pass: true}}}}})
	var buf bytes.Buffer
	if err := WriteTerminal(&buf, rep, nil, TerminalOptions{}); err != nil || buf.Len() != 0 {
		t.Errorf("terminal wrote %q (%v)", buf.String(), err)
	}
	if err := WriteMarkdown(&buf, rep); err != nil || buf.Len() != 0 {
		t.Errorf("markdown wrote %q (%v)", buf.String(), err)
	}
	if h, err := HTML(rep); err != nil || h != "" {
		t.Errorf("html wrote %q (%v)", h, err)
	}
}

// TestHTML: the fragment is well-formed (as XML, strictly), names are escaped, and exactly the
// wrong cells carry the wrong class and mark.
func TestHTML(t *testing.T) {
	rep := mixedReport(t)
	rep.Overall[0].Labels = `<script>alert("x")</script>` // a name that must stay text
	frag, err := HTML(rep)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(frag)))
	dec.Strict = true
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, frag)
		}
	}
	if strings.Contains(string(frag), "<script>") {
		t.Error("a cell's name reached the page as markup")
	}
	doc, err := html.Parse(strings.NewReader(string(frag)))
	if err != nil {
		t.Fatal(err)
	}
	var wrong, marked, counts []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch {
				case a.Key == "class" && a.Val == "tt-wrong":
					wrong = append(wrong, text(n))
				case a.Key == "data-testid" && a.Val == "truth-count":
					counts = append(counts, text(n))
				}
			}
			if n.Data == "td" && strings.HasPrefix(text(n), "✗") {
				marked = append(marked, text(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	tables := Build(rep, nil)
	want := 0
	var wantCounts []string
	for _, tab := range tables {
		want += tab.Count().Wrong
		wantCounts = append(wantCounts, tab.Count().String())
	}
	if want == 0 || len(wrong) != want || len(marked) != want {
		t.Errorf("wrong cells: %d with the class, %d marked, want %d: %q", len(wrong), len(marked), want, wrong)
	}
	for _, w := range wrong {
		if !strings.HasPrefix(w, "✗ REACHED ") {
			t.Errorf("wrong cell %q", w)
		}
	}
	if strings.Join(counts, "|") != strings.Join(wantCounts, "|") {
		t.Errorf("count lines %q, want %q", counts, wantCounts)
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
