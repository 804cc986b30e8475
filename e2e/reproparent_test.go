package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript"
)

// TestReproStandaloneParent: srt 0.0.83 told to use a parent proxy leaves the resolved-address
// check to the parent (known findings, which srt documents): `sandcheck repro` writes a reproducer
// for each, which, run as a maintainer would (sh, outside sandcheck), stands up a parent proxy of
// its own where the settings name one and sees the allowed name that resolves to the host's
// loopback, or to the metadata address, reach it through that parent: exit 1, saying so.
func TestReproStandaloneParent(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "python3", "setpriv", "ip")
	out := reproKnown(t, "--target", "srt", "--label-filter", "bypass-parent-proxy")
	for scenario, reached := range map[string]string{
		"bypass/parent-proxy/rebind-loopback": "loopback@80 GET /repro/case",
		"bypass/parent-proxy/rebind-metadata": "metadata@80 GET /repro/case",
	} {
		script := filepath.Join(out, "repro", reproscript.FileName(scenario))
		code, got := runScript(t, script, srtPath(t), "")
		if code != 1 || !strings.Contains(got, reached) || !strings.Contains(got, "\nparent@") {
			t.Errorf("%s: exit %d, want 1 with %q through the parent proxy\n%s", script, code, reached, got)
		}
	}
}
