package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/codex"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// TestReproStandaloneCodex: Codex 0.171.0's proxy serves a request without the session's
// credentials (a known finding, targets/codex/knownfindings.yaml): `sandcheck repro` writes its
// reproducer, which, run outside sandcheck with the real Codex, exits 1 and shows the allowed
// host logging the request. The same script for a case Codex's proxy refuses (from the same
// run's evidence: a matching case through its HTTP proxy) exits 0.
func TestReproStandaloneCodex(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	const finding = "bypass/other-egress/proxy-no-credentials"
	out := reproKnown(t, "--target", "codex", "--label-filter", "bypass-other-egress-proxy-no-credentials || bypass-matching")
	script := filepath.Join(out, "repro", reproscript.FileName(finding))
	if code, got := runScript(t, script, codexBin, ""); code != 1 || !strings.Contains(got, "allowed@80 GET /repro/case") {
		t.Errorf("%s: exit %d, want 1 with the allowed host logging the request\n%s", script, code, got)
	}
	// A case Codex closes, its script from the same run: the first matching case that passed and
	// has one.
	var closed, scenario string
	if _, err := journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
		for _, s := range r.Scenarios {
			if closed != "" || !s.Pass || s.Outcome != model.Correct || !strings.HasPrefix(s.Name, "bypass/matching/") {
				continue
			}
			if text, err := reproscript.Script(r, s.Name, ""); err == nil {
				closed, scenario = text, s.Name
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if closed == "" {
		t.Fatal("no matching case Codex closes has a script: nothing to show the script passing")
	}
	path := filepath.Join(t.TempDir(), "closed.sh")
	if err := os.WriteFile(path, []byte(closed), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, got := runScript(t, path, codexBin, ""); code != 0 || !strings.Contains(got, "no bug") {
		t.Errorf("%s, which Codex refuses: exit %d, want 0\n%s", scenario, code, got)
	}
}
