package schema

import (
	"bytes"
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
