package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/reproscript"
)

// A published escape from end to end (issues 28 and 31): srt dialled an allowed name that
// resolves to the host's loopback (bypass/resolved-address/loopback), open in 0.0.75. As the
// unprivileged user, `bisect` between 0.0.75 and 0.0.83 names the release that fixed it; `repro
// --out DIR` on the open release writes DIR/repro/bypass-resolved-address-loopback.sh; and that
// script, run as a maintainer would run it (sh, a fresh environment, outside sandcheck), shows the
// bug with the last open release (exit 1) and not with the fixing one (exit 0).
const (
	reproOpenRelease  = "0.0.75"
	reproFixedRelease = "0.0.76"
	reproScenario     = "bypass/resolved-address/loopback"
	reproLabels       = "bypass-resolved-address-loopback"
)

func TestReproStandalone(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	stdout, stderr, code := sandcheckExit(t, nil, "bisect", "--target", "srt", "--label-filter", reproLabels,
		"--good", reproOpenRelease, "--bad", "0.0.83", "-n", "5", "--out", t.TempDir(), "--json")
	var fix struct {
		FirstBad string `json:"first_bad"`
		LastGood string `json:"last_good"`
	}
	if err := json.Unmarshal([]byte(stdout), &fix); err != nil || code != 0 || fix.FirstBad != reproFixedRelease || fix.LastGood != reproOpenRelease {
		t.Fatalf("bisect: exit %d, %+v (%v), want the fix in %s after %s\n%s\n%s", code, fix, err, reproFixedRelease, reproOpenRelease, stdout, stderr)
	}
	out := t.TempDir()
	stdout, stderr, code = sandcheckExit(t, nil, "repro", "--target", "srt@"+reproOpenRelease, "--label-filter", reproLabels, "-n", "1", "--out", out)
	if code != 1 {
		t.Fatalf("sandcheck repro on srt %s: exit %d, want 1 (the escape)\n%s\n%s", reproOpenRelease, code, stdout, stderr)
	}
	script := filepath.Join(out, "repro", reproscript.FileName(reproScenario))
	if !strings.Contains(stdout, script) {
		t.Errorf("the report does not name the reproducer %s:\n%s", script, stdout)
	}
	for _, c := range []struct {
		release string
		want    int
	}{{reproOpenRelease, 1}, {reproFixedRelease, 0}} {
		srt := "/var/cache/sandcheck/npm/@anthropic-ai/sandbox-runtime@" + c.release + "/node_modules/.bin/srt"
		run := exec.Command("sh", script)
		run.Dir = t.TempDir()
		run.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + srt}
		got, err := run.CombinedOutput()
		if code := exitCode(err); code != c.want {
			t.Errorf("%s with srt %s: exit %d, want %d\n%s", script, c.release, code, c.want, got)
		}
		if c.want == 1 && !strings.Contains(string(got), "loopback@80 GET /repro/case") {
			t.Errorf("%s with srt %s: the fixture's loopback listener is not in what it printed:\n%s", script, c.release, got)
		}
	}
}

// exitCode is a finished command's exit status (-1: it did not run to an exit).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if x, ok := err.(*exec.ExitError); ok {
		return x.ExitCode()
	}
	return -1
}
