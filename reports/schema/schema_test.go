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

// A report older than the decisions cannot be judged (it holds verdict tallies made under one
// acceptance, which a gate with another would misread): it is refused, saying how to remake it.
// Examples find their evidence by reference, or inline as v1 reports kept it.
func TestOldReportsRefusedAndEvidence(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		_, err := Decode(strings.NewReader(`{"schema_version":`+v+`,"cells":[],"overall":[]}`), "old.json")
		if err == nil || !strings.Contains(err.Error(), "old.json: report schema_version "+v+" predates the decisions") ||
			!strings.Contains(err.Error(), "sandcheck report") {
			t.Errorf("v%s report: %v", v, err)
		}
	}
	inline := Report{SchemaVersion: Version}
	if ev := inline.ExampleEvidence(Example{Evidence: json.RawMessage(`{"inline":true}`)}); string(ev) != `{"inline":true}` {
		t.Fatalf("inline evidence = %s", ev)
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
