package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/srt"
)

// The standalone reproducer (issue 31), end to end, on a real escape of a real release: srt
// 0.0.75 dials an allowed name that resolves to the host's loopback (bypass/resolved-address,
// open from 0.0.70 to 0.0.75); srt 0.0.83 refuses it. `sandcheck repro --out DIR` on the open
// release writes DIR/repro/bypass-resolved-address-loopback.sh; run as a maintainer would run
// it (sh, a fresh environment, outside sandcheck), the script shows the bug with that release
// (exit 1) and not with the fixed one (exit 0).
const (
	reproOpenRelease = "0.0.75"
	reproScenario    = "bypass/resolved-address/loopback"
)

func TestReproStandalone(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "repro", "--target", "srt@"+reproOpenRelease, "--label-filter", "bypass-resolved-address-loopback", "-n", "1", "--out", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("sandcheck repro on srt %s: exit %d, want 1 (the escape)\n%s", reproOpenRelease, code, b)
	}
	script := filepath.Join(out, "repro", reproscript.FileName(reproScenario))
	if !strings.Contains(string(b), script) {
		t.Errorf("the report does not name the reproducer %s:\n%s", script, b)
	}
	open, err := filepath.Glob("/var/cache/sandcheck/npm/@anthropic-ai/sandbox-runtime@" + reproOpenRelease + "/node_modules/.bin/srt")
	if err != nil || len(open) != 1 {
		t.Fatalf("srt %s not in the cache after the run: %v", reproOpenRelease, open)
	}
	fixed, err := srt.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		srt  string
		want int
	}{{open[0], 1}, {fixed, 0}} {
		run := exec.Command("sh", script)
		run.Dir = t.TempDir()
		run.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + c.srt}
		got, err := run.CombinedOutput()
		if code := exitCode(err); code != c.want {
			t.Errorf("%s with %s: exit %d, want %d\n%s", script, c.srt, code, c.want, got)
		}
		if c.want == 1 && !strings.Contains(string(got), "loopback@80") {
			t.Errorf("%s with %s: the fixture's loopback listener is not in what it printed:\n%s", script, c.srt, got)
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
