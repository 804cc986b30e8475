package format

import (
	"bytes"
	"encoding/json"
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

// TestEveryFormatNamesTheUser: the same cell run as the dedicated account and as root are two
// rows, each named with its user in report.json, report.md, junit.xml and report.html, each
// with its own host fingerprint; a journal from before the user axis (no user) reads as it did.
func TestEveryFormatNamesTheUser(t *testing.T) {
	a, err := aggregate.New(aggregate.Options{Now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	fp := func(name string) json.RawMessage {
		return json.RawMessage(`{"kernel":"6.1.0","user":{"spec":"x","name":"` + name + `","uid":1001}}`)
	}
	cells := []model.Cell{
		{ID: "srt.local-unprivileged.healthy-1", Target: "srt", Host: "local", User: "unprivileged"},
		{ID: "srt.local.healthy-2", Target: "srt", Host: "local", User: "root"},
		{ID: "srt.old.healthy-3", Target: "srt", Host: "old"},
	}
	for i, c := range cells {
		r := model.Record{V: 1, RunID: "r", Cell: c, Outcome: model.Correct,
			Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}}}
		if i == 0 {
			r.HostFP = fp("sandcheck")
		} else {
			r.HostFP = fp("root")
		}
		a.Add(r)
	}
	rep := a.Report()
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back schema.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	users := map[string]string{}
	for _, o := range back.Overall {
		users[o.CellID] = o.User
	}
	if users[cells[0].ID] != "unprivileged" || users[cells[1].ID] != "root" || users[cells[2].ID] != "" {
		t.Errorf("report.json users: %v", users)
	}
	if _, ok := back.Hosts["local user=unprivileged"]; !ok || back.Hosts["local"] == nil || back.Hosts["old"] == nil {
		t.Errorf("fingerprints: %v", keys(back.Hosts))
	}
	var md, xml, html bytes.Buffer
	if err := markdown.Write(&md, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := junit.Write(&xml, rep); err != nil {
		t.Fatal(err)
	}
	if err := htmlpage.Write(&html, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report.md": md.String(), "junit.xml": xml.String(), "report.html": html.String()} {
		for _, want := range []string{"srt@local user=unprivileged", "srt@local user=root"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q", name, want)
			}
		}
		if strings.Contains(out, "srt@old user=") {
			t.Errorf("%s: a pre-axis cell got a user", name)
		}
	}
	if !strings.Contains(md.String(), "### Host `local user=unprivileged`") || !strings.Contains(xml.String(), `<property name="user" value="unprivileged">`) {
		t.Errorf("report.md host table or junit property missing:\n%s", md.String())
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
