package wording

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// Pages show the head of a failure's evidence and say where the rest is; a failure known
// findings cover in full shows where its evidence is instead; a passing example says it has none.
func TestPageEvidence(t *testing.T) {
	ref := schema.EvidenceKey("r", "c", 4)
	big := json.RawMessage(fmt.Sprintf(`{"stderr":%q}`, strings.Repeat("x", 2*PageEvidenceBytes)))
	rep := &schema.Report{Evidence: map[string]json.RawMessage{ref: big}}
	got := ExampleEvidence(rep, schema.Example{RunID: "r", Trial: 4, EvidenceRef: ref}, PageEvidenceBytes, false)
	if len(got) > PageEvidenceBytes+200 || !strings.Contains(got, "cut here") || !strings.Contains(got, ref) {
		t.Fatalf("cut evidence: %d bytes, ends %q", len(got), got[max(0, len(got)-150):])
	}
	got = ExampleEvidence(rep, schema.Example{RunID: "r", Trial: 4, EvidenceRef: ref, Known: true}, PageEvidenceBytes, false)
	if !strings.Contains(got, "known finding") || !strings.Contains(got, ref) || strings.Contains(got, "xxxx") {
		t.Fatalf("known example: %q", got)
	}
	// A bug report shows it all the same: its reader needs exactly that evidence.
	got = ExampleEvidence(rep, schema.Example{RunID: "r", Trial: 4, EvidenceRef: ref, Known: true}, PageEvidenceBytes, true)
	if !strings.Contains(got, "xxxx") || !strings.Contains(got, "cut here") {
		t.Fatalf("known example in a bug report: %q", got[:min(len(got), 200)])
	}
	if got := ExampleEvidence(rep, schema.Example{RunID: "r", Trial: 9, Pass: true}, PageEvidenceBytes, false); !strings.Contains(got, "passing trial") {
		t.Fatalf("passing example: %q", got)
	}
}

func TestEnvTableMatchesKeySpellings(t *testing.T) {
	rows := EnvTable(json.RawMessage(`{"Kernel-Release":"6.1","os_release":{"PRETTY_NAME":"Debian 12"},"wsl_version":null,"extra":"x","git":{"http":{"proxy":"http://p:3128"}}}`))
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	want := map[string]string{"kernel": "6.1", "distro": "PRETTY_NAME=Debian 12", "WSL version": "absent", "git proxy": "http://p:3128", "socat": "unknown", "extra": "x"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
