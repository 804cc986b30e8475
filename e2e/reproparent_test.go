package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/codex"
)

// TestReproStandaloneParent: srt 0.0.83 told to use a parent proxy, and Claude Code 2.1.332 run
// with the caller's proxy variables naming one, leave the resolved-address check to the parent;
// Codex 0.171.0, given one that way, sends a SOCKS5 request around it (known findings, which srt
// and Codex document). `sandcheck repro` writes a reproducer for each, which, run as a maintainer
// would (sh, outside sandcheck), stands up a parent proxy of its own where the trial's was (srt's
// settings, the caller's environment) and sees the request go where the trial's did: exit 1,
// saying so.
func TestReproStandaloneParent(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "python3", "setpriv", "ip")
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	rebind := map[string]string{
		"bypass/parent-proxy/rebind-loopback": "\nparent@",
		"bypass/parent-proxy/rebind-metadata": "\nparent@",
	}
	for _, c := range []struct {
		target, sandbox, labels string
		shows                   map[string]string // scenario -> what its script prints
	}{
		{"srt", srtPath(t), "bypass-parent-proxy", rebind},
		{"claude-code@2.1.332", claudeRelease(t, "2.1.332"), "bypass-parent-proxy", rebind},
		{"codex", codexBin, "bypass-parent-proxy-through-socks",
			map[string]string{"bypass/parent-proxy/through-socks": "BUG: the request reached the allowed host around the parent proxy"}},
	} {
		out := reproKnown(t, "--target", c.target, "--label-filter", c.labels)
		for scenario, shows := range c.shows {
			script := filepath.Join(out, "repro", reproscript.FileName(scenario))
			code, got := runScript(t, script, c.sandbox, "")
			if code != 1 || !strings.Contains(got, shows) {
				t.Errorf("%s on %s: exit %d, want 1 with %q\n%s", script, c.target, code, shows, got)
			}
		}
	}
}
