//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
)

// A cell's fault that cannot act on its target (the target offers none of the seams the fault
// acts through) must not run as a healthy trial that passes: the trial is not-applicable and
// says why. Seen with codex, whose proxy runs in its own process: `--fault open-proxy` (srt's
// proxy ports) and `--fault bridge-absent` (srt's socat relays) ran Codex unchanged: correct.
func TestFaultThatCannotActIsNotApplicable(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "codex")
	os.WriteFile(exe, []byte("#!/bin/sh\nprintf 'Commands:\\n  sandbox  Run commands within a Codex-provided sandbox\\n'\nprintf 'network_proxy  experimental  false\\n'\n"), 0o755)
	for fault, want := range map[string]string{
		"open-proxy":    "proxy-ports, which codex does not offer",
		"bridge-absent": "socat",
		"":              "",
		"netns-shared":  "",
	} {
		tr, ok := undrivableTrial(harness.Config{Target: "codex", TargetPath: exe, Fault: fault})
		if want == "" {
			if ok {
				t.Errorf("fault %q: not-applicable (%s), want the trial run", fault, tr.Hint)
			}
			continue
		}
		if !ok || tr.Outcome != model.NotApplicable || !strings.Contains(tr.Hint, want) || !strings.Contains(tr.Hint, fault) {
			t.Errorf("fault %q: ok=%v %s %q, want not-applicable naming the fault and %q", fault, ok, tr.Outcome, tr.Hint, want)
		}
	}
}
