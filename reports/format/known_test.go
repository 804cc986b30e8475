package format

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/junit"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// knownReport: one cell of 20 trials where
//   - filesystem/read-secret fails in every trial, covered by a known finding;
//   - filesystem/write-outside fails twice, not known, with a write outside the workspace;
//   - network/udp carries a known finding that did not show in any trial (fixed?);
//   - network/seed's known finding did not show in 19 of 20 trials: it still reproduced once.
func knownReport(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{Now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "srt-local", Target: "srt", Host: "local"}
	for i := 0; i < 20; i++ {
		seed := model.Scenario{Name: "network/seed", Outcome: model.Correct, Pass: true, Unreproduced: "srt:network/seed#udp"}
		if i == 7 {
			seed = model.Scenario{Name: "network/seed", Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "udp: denied.sandcheck.test reached", Known: "srt:network/seed#udp"}}}
		}
		write := model.Scenario{Name: "filesystem/write-outside", Outcome: model.Correct, Pass: true}
		if i < 2 {
			write = model.Scenario{Name: "filesystem/write-outside", Outcome: model.NonEnforcing, Hint: "wrote outside the workspace", Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "write /root/sandcheck-outside"}}}
		}
		a.Add(model.Record{V: 1, RunID: "r", Cell: cell, Trial: i, Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
			{Name: "filesystem/read-secret", Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "read /root/.ssh/id_ed25519", Known: "srt:filesystem/read-secret"}}},
			write,
			{Name: "network/udp", Outcome: model.Correct, Pass: true, Unreproduced: "srt:network/udp"},
			seed,
		}})
	}
	return a.Report()
}

func TestKnownFindingsAndBreachesInReports(t *testing.T) {
	rep := knownReport(t)
	var md, page, xml bytes.Buffer
	if err := markdown.Write(&md, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := htmlpage.Write(&page, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := junit.Write(&xml, rep); err != nil {
		t.Fatal(err)
	}
	h := html.UnescapeString(page.String())
	for _, c := range []struct {
		doc, name string
		want      []string
	}{
		{md.String(), "report.md", []string{
			"**Fail-open in 20 trial(s): filesystem/read-secret: read /root/.ssh/id_ed25519 (20); filesystem/write-outside: write /root/sandcheck-outside (2); network/seed: udp: denied.sandcheck.test reached (1).**",
			"  - filesystem/read-secret: **known finding** `srt:filesystem/read-secret` in 20 of 20 trials: read /root/.ssh/id_ed25519 (20) (still a failure; the gate passes it only if its policy accepts it: `accept_known`).",
			"  - network/udp: known finding `srt:network/udp` did not reproduce in any of 20 trials (fixed?).",
			"| filesystem/write-outside | 20 | 2 |",
			"FAIL-OPEN x2: write /root/sandcheck-outside (2) |",
			"known finding srt:network/seed#udp in 1 of 20 trials",
		}},
		{h, "report.html", []string{
			`data-scenario="filesystem/read-secret" data-known="true" class="open known"`,
			">OPEN (known)<",
			"<li>filesystem/write-outside: write /root/sandcheck-outside (2)</li>",
			`data-testid="known">known finding srt:filesystem/read-secret in 20 of 20 trials (still a failure)`,
			`data-testid="fixed">known finding srt:network/udp did not reproduce in any of 20 trials (fixed?)`,
			"breached: write /root/sandcheck-outside (2)",
		}},
		{xml.String(), "junit.xml", []string{
			"breached: read /root/.ssh/id_ed25519 (20); known finding srt:filesystem/read-secret in 20 of 20 trials",
			"known finding srt:network/udp did not reproduce in any of 20 trials (fixed?)",
		}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.doc, w) {
				t.Errorf("%s lacks %q", c.name, w)
			}
		}
		// The generic network wording must never describe a file read or write.
		if strings.Contains(c.doc, "denied host was reached") {
			t.Errorf("%s says the denied host was reached", c.name)
		}
	}
	// A finding that showed once is not "fixed?", and a row mixing a known and a new failure is
	// not marked known as a whole.
	for _, w := range []string{"srt:network/seed#udp did not reproduce", `data-scenario="filesystem/write-outside" data-known`} {
		if strings.Contains(md.String(), w) || strings.Contains(h, w) {
			t.Errorf("reports hold %q", w)
		}
	}
}
