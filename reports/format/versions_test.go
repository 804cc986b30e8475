package format

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/junit"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// versionReport is srt on one host at four versions: a residue appears in 0.0.20, 0.0.21 does not
// start, 0.0.22 is clean again; plus one scenario clean everywhere.
func versionReport(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok, res, sf := model.Correct, model.Residue, model.SandboxFailed
	add := func(v string, overall model.Outcome, ws model.Outcome) {
		cell := model.Cell{ID: "srt-" + v, Target: "srt", Version: v, Host: "local"}
		for i := range 4 {
			rec := model.Record{RunID: "r1", Cell: cell, Trial: i, Outcome: overall, Scenarios: []model.Scenario{
				{Name: "network/seed", Outcome: ws, Pass: ws == ok || ws == res},
				{Name: "filesystem/workspace/clean", Outcome: ws, Pass: ws == ok, Hint: "apply-seccomp: write /proc/self/uid_map: Operation not permitted"},
			}}
			if ws == res {
				rec.Scenarios[0].Outcome = ok
			}
			a.Add(rec)
		}
	}
	add("0.0.9", ok, ok)
	add("0.0.20", res, res)
	add("0.0.21", sf, sf)
	add("0.0.22", ok, ok)
	return a.Report()
}

func TestVersionTableInMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := markdown.Write(&b, versionReport(t), Options{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## Versions",
		"### srt on local: 4 versions, 0.0.9 .. 0.0.22",
		"| scenario | 0.0.9 | 0.0.20 | 0.0.21 | 0.0.22 |",
		"| filesystem/workspace/clean | 0% [0–49%] | **▲100% [51–100%] residue** | sandbox-failed (band) | **▼0% [0–49%]** |",
		"- **0.0.21**: the sandbox failed to start in (nearly) every scenario (sandbox-failed, 4 trials): apply-seccomp: write /proc/self/uid_map: Operation not permitted",
		"- filesystem/workspace/clean: 0.0.9 → 0.0.20 worse: correct 4/4 → residue 4/4 (p=0.014, first seen in 0.0.20)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q\n%s", want, md)
		}
	}
	if !strings.Contains(md, "| sandbox | per cell: srt 0.0.9 … 0.0.22 (4 versions) |") {
		t.Error("the environment names one build for a host that ran four")
	}
	// The versions section comes before the per-cell details.
	if strings.Index(md, "## Versions") > strings.Index(md, "## Environment") {
		t.Error("the version table should lead, right after the summary")
	}
}

func TestJUnitClassPerVersion(t *testing.T) {
	var b bytes.Buffer
	if err := junit.Write(&b, versionReport(t)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`classname="sandcheck.srt-0_0_9.local"`, `classname="sandcheck.srt-0_0_22.local"`, `name="sandcheck/srt 0.0.20@local"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("junit.xml lacks %s", want)
		}
	}
}

func TestVersionTableInHTML(t *testing.T) {
	var b bytes.Buffer
	if err := htmlpage.Write(&b, versionReport(t), Options{}); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var bandHeads, sigChanges []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			count[attrs["data-testid"]]++
			if attrs["data-testid"] == "version-head" && attrs["class"] == "band" {
				bandHeads = append(bandHeads, text(n))
			}
			if attrs["data-testid"] == "version-cell" && strings.Contains(attrs["class"], "sig") {
				sigChanges = append(sigChanges, attrs["data-version"])
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	// One table, four versions; network/seed failed only in the band version, so the one row is
	// the workspace scenario's.
	if count["version-table"] != 1 || count["version-head"] != 4 || count["version-cell"] != 4 {
		t.Fatalf("elements %v", count)
	}
	if strings.Join(bandHeads, ",") != "0.0.21" {
		t.Errorf("band columns %v, want 0.0.21", bandHeads)
	}
	if strings.Join(sigChanges, ",") != "0.0.20,0.0.22" {
		t.Errorf("significant changes at %v", sigChanges)
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
