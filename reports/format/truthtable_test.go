package format

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// openProxyReport is srt with an open proxy: the denied host reached over http in both trials.
func openProxyReport(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "c1", Target: "srt", Host: "local", Fault: "open-proxy"}
	for i := range 2 {
		a.Add(model.Record{RunID: "r", Cell: cell, Trial: i, Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
			{Name: "network/channel/http", Outcome: model.NonEnforcing, Breaches: []model.Breach{
				{Scenario: "network/channel/http", Check: "http:denied", Outcome: model.NonEnforcing, What: "http: denied.sandcheck.test reached"}}},
			{Name: "network/channel/direct", Outcome: model.Correct, Pass: true},
		}})
	}
	rep := a.Report()
	rep.Overall[0].Network = &schema.NetworkPolicy{Reach: []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}}
	return rep
}

// TestTruthTablesInReports: report.md and report.html carry the truth tables, the wrong cell
// marked in each.
func TestTruthTablesInReports(t *testing.T) {
	rep := openProxyReport(t)
	var md bytes.Buffer
	if err := markdown.Write(&md, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Truth tables", "| denied http | refused | **✗ REACHED 2/2** |", "1 wrong, 0 not applicable, 2 right, 1 unjudged"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var page bytes.Buffer
	if err := htmlpage.Write(&page, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Truth tables</h2>", `<td class="tt-wrong"`, "✗ REACHED 2/2", "table.truth td.tt-wrong {"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page.String(), `class="tt-wrong"`); n != 1 {
		t.Errorf("report.html marks %d cells wrong, want 1", n)
	}
}
