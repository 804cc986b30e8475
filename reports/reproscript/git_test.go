package reproscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// fsTrialEvidence is the fs-interplay session's evidence as a run keeps it (keyed by the
// scenario it ran for, beside a bypass session's), for srt run as the dedicated account.
func fsTrialEvidence(fault string) json.RawMessage {
	fs := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "fault": fault,
		"settings": map[string]any{
			"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
			"filesystem": map[string]any{"allowWrite": []string{"/tmp/sandcheck-trial-7/fakehome"}, "denyRead": []string{"/tmp/sandcheck-trial-7/fakehome/proj/sub/private"}, "denyWrite": []string{}},
		},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", "/tmp/sandcheck-trial-7/srt-settings.json", "-c", "'probe' 'x'"}},
	}
	b, _ := json.Marshal(map[string]any{"bypass/git/submodule-config": fs, "bypass/secrets/env-deny": json.RawMessage(trialEvidence("", "http"))})
	return b
}

// TestGitScript: every git case the class has gets a script that is valid sh, carries the
// trial's settings with its own directory in the trial's place, runs the sandbox as the trial's
// account, proves first that git runs a planted core.fsmonitor at all, and runs git status where
// the case planted it; a fault's finding gets none.
func TestGitScript(t *testing.T) {
	rec := model.Record{Evidence: fsTrialEvidence("")}
	for id, gc := range gitCases {
		s, err := Script(rec, "bypass/git/"+id, "write $HOME/proj/sub/x")
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for _, want := range []string{`"@DIR@/fakehome"`, "RUN_AS=${RUN_AS:-sandcheck}", "could not tell: this git does not run core.fsmonitor",
			gc.command, `cd "$ws/` + gc.statusIn + `" && as_user git status`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: script lacks %q", id, want)
			}
		}
		if strings.Contains(s, "/tmp/sandcheck-trial-7") {
			t.Errorf("%s: the trial's directory is left in the script", id)
		}
		f := filepath.Join(t.TempDir(), "r.sh")
		os.WriteFile(f, []byte(s), 0o755)
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", id, err, out)
		}
	}
	if _, err := Script(model.Record{Evidence: fsTrialEvidence("fs-unmask")}, "bypass/git/deep-repo-config", ""); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("a fault's finding: %v", err)
	}
	if _, err := Script(rec, "bypass/git/no-such-case", ""); err == nil {
		t.Error("an unknown git case got a script")
	}
}
