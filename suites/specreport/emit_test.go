package specreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sandcheck/sandcheck/runner/journal"
	"github.com/sandcheck/sandcheck/suites/classify"
)

func TestEmitRoundTripAmongNoise(t *testing.T) {
	in := Trial{Outcome: classify.ProxyDead, Hint: "bridge not listening",
		Scenarios: []journal.Scenario{{Name: "network/seed", Outcome: classify.ProxyDead}},
		Evidence:  json.RawMessage(`{"x":1}`)}
	var buf bytes.Buffer
	buf.WriteString("ginkgo progress output\nno newline at end")
	if err := Emit(&buf, in, json.RawMessage(`{"kernel":"6.1"}`)); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("trailing noise\n")
	out, fp, err := ParseEmitted(buf.Bytes())
	if err != nil || out.Outcome != in.Outcome || out.Hint != in.Hint || len(out.Scenarios) != 1 ||
		string(out.Evidence) != `{"x":1}` || string(fp) != `{"kernel":"6.1"}` {
		t.Fatalf("round trip: %+v %s %v", out, fp, err)
	}
	if _, _, err := ParseEmitted([]byte("nothing here\n")); !errors.Is(err, ErrNoResult) {
		t.Fatalf("missing line: %v", err)
	}
}
