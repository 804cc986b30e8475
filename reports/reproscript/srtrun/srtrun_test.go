package srtrun

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestUnanchoredPatternRelocated: a read-denied pattern that spells the trial's directory with a
// wildcard in its first element (bypass/globs/unanchored) becomes the script's own directory
// spelled the same way, which the script works out when it runs.
func TestUnanchoredPatternRelocated(t *testing.T) {
	settings := json.RawMessage(`{"filesystem":{"denyRead":["/tmp/sandcheck-trial-7/fakehome/proj/sub/vault/*.key","/tm?/sandcheck-trial-7/fakehome/proj/sub/keys/secret.pem"]}}`)
	got, err := Relocate(settings, "/tmp/sandcheck-trial-7")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"@DIR@/fakehome/proj/sub/vault/*.key"`) || !strings.Contains(got, `"@DIR?@/fakehome/proj/sub/keys/secret.pem"`) {
		t.Fatalf("relocated: %s", got)
	}
	var b strings.Builder
	run := Run{Target: "srt", Version: "0.0.83", Settings: settings, Argv: []string{"/opt/srt", "--settings", "/tmp/sandcheck-trial-7/s.json", "-c", "x"}}
	if err := run.Open(&b, "bypass/globs/unanchored", "", "", `w=/tmp/repro.AbC123; mkdir -p "$w"; trap 'rm -rf "$w"' EXIT`+"\n"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", b.String()+`cat "$w/settings.json"`).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), `"/tm?/repro.AbC123/fakehome/proj/sub/keys/secret.pem"`) || !strings.Contains(string(out), `"/tmp/repro.AbC123/fakehome/proj/sub/vault/*.key"`) {
		t.Fatalf("the script's settings:\n%s", out)
	}
}
