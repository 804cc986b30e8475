package requestscript

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParentOf: a parent proxy on the host's loopback is one the script stands up; none is none;
// one elsewhere, or two different ones, get no script, saying why; Claude Code's is the trial's
// policy's, given as the caller's proxy variables, and Codex's; another target's there gets none.
func TestParentOf(t *testing.T) {
	for settings, want := range map[string]string{
		`{"network": {"parentProxy": {"http": "http://127.0.0.1:8118", "https": "http://127.0.0.1:8118"}}}`: "127.0.0.1:8118",
		`{"network": {"parentProxy": {"http": "http://127.0.0.1:3128"}}}`:                                   "127.0.0.1:3128",
		`{"network": {"allowedDomains": ["a.example"]}}`:                                                    "",
	} {
		if got, err := parentOf(json.RawMessage(settings)); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", settings, got, err, want)
		}
	}
	for _, settings := range []string{
		`{"network": {"parentProxy": {"http": "http://proxy.corp.example:3128"}}}`,
	} {
		if _, err := parentOf(json.RawMessage(settings)); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v, want an error naming the loopback", settings, err)
		}
	}
	if _, err := parentOf(json.RawMessage(`{"network": {"parentProxy": {"http": "http://127.0.0.1:1", "https": "http://127.0.0.1:2"}}}`)); err == nil {
		t.Error("two parent proxies: no error")
	}
	// Claude Code's comes from the trial's policy, given as the caller's proxy variables.
	e := &evidence{}
	e.Target, e.Policy.ParentProxy = "claude-code", "http://127.0.0.1:4000"
	if got, err := e.parent(); got != "127.0.0.1:4000" || err != nil {
		t.Errorf("Claude Code's parent: %q, %v", got, err)
	}
	e.Target = "firejail"
	if _, err := e.parent(); err == nil {
		t.Error("a parent the script cannot give firejail: no error")
	}
}
