package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNamesAndKeys(t *testing.T) {
	c := Cell{CellRef: CellRef{CellID: "id1", Target: "srt", Host: "wsl2", Fault: "bridge-late:delay=2s", Labels: "nested"}, Scenario: "network/seed"}
	if got := c.Name(); got != "srt@wsl2 fault=bridge-late:delay=2s [nested] network/seed" {
		t.Fatalf("Name = %q", got)
	}
	other := c
	other.Target = "renamed" // the key follows the stable ID, not the display fields
	if c.Key() != other.Key() || c.Key() == (Cell{CellRef: c.CellRef, Scenario: "network/dns"}).Key() {
		t.Fatal("Key must be cell ID + scenario")
	}
	got := OutcomeList(map[string]int{"proxy-dead": 2, "correct": 7, "weird": 1, "timeout": 0}, []string{"correct", "proxy-dead"})
	if got != "correct x7, proxy-dead x2, weird x1" {
		t.Fatalf("OutcomeList = %q", got)
	}
}

func TestEncodeDecode(t *testing.T) {
	var buf bytes.Buffer
	in := &Report{SchemaVersion: Version, SandcheckVersion: "v1", Cells: []Cell{{Scenario: "s", Counts: Counts{Trials: 3, CI95: [2]float64{0.1, 0.9}}}}}
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"ci95": [`) {
		t.Fatalf("ci95 must be a [low, high] array:\n%s", buf.String())
	}
	out, err := Decode(&buf, "r.json")
	if err != nil || out.Cells[0].Trials != 3 || out.Cells[0].CI95[1] != 0.9 {
		t.Fatalf("decode: %+v %v", out, err)
	}
	if _, err := Decode(strings.NewReader("{"), "r.json"); err == nil || !strings.HasPrefix(err.Error(), "r.json: ") {
		t.Fatalf("syntax error must name the file: %v", err)
	}
}

// A v1 report (evidence inline in its examples) is still read, and its evidence still found; a
// v2 report's examples find theirs by reference.
func TestEvidenceOfV1AndV2Reports(t *testing.T) {
	v1 := `{"schema_version":1,"cells":[],"overall":[{"cell_id":"c","target":"srt","host":"local","fault":"","trials":1,"measured":1,"outcomes":{"proxy-dead":1},"failures":1,"failure_rate":1,"ci95":[0.2,1],"clopper_pearson":[0.02,1],"fail_open":0,"fail_closed":{"count":1,"rate":1,"ci95":[0.2,1]},"examples":{"proxy-dead":{"run_id":"r","trial":0,"start":"2026-01-02T03:04:05Z","pass":false,"evidence":{"inline":true}}}}]}`
	rep, err := Decode(strings.NewReader(v1), "v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if ev := rep.ExampleEvidence(rep.Overall[0].Examples["proxy-dead"]); string(ev) != `{"inline":true}` {
		t.Fatalf("v1 evidence = %s", ev)
	}
	v2 := &Report{SchemaVersion: Version, Evidence: map[string]json.RawMessage{EvidenceKey("r", "c", 3): json.RawMessage(`{"ref":true}`)}}
	ex := Example{RunID: "r", Trial: 3, EvidenceRef: EvidenceKey("r", "c", 3)}
	if ev := v2.ExampleEvidence(ex); string(ev) != `{"ref":true}` {
		t.Fatalf("v2 evidence = %s", ev)
	}
	if ev := v2.ExampleEvidence(Example{Pass: true}); ev != nil {
		t.Fatalf("an example without a reference has evidence %s", ev)
	}
}
