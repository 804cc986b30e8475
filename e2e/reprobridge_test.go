package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript"
)

// TestReproStandaloneBridge: the bridge finding of srt 0.0.83 (a known finding, open) gets a
// reproducer from `sandcheck repro`, which, run as a maintainer would (sh, outside sandcheck),
// swaps srt's bridge sockets in its writable TMPDIR for links to a socket of the script's own and
// sees the relay carry the command's proxy request there: exit 1, saying so; and leaves no
// network namespace behind.
func TestReproStandaloneBridge(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "python3", "setpriv", "ip")
	out := reproKnown(t, "--target", "srt", "--label-filter", "bypass-bridge")
	script := filepath.Join(out, "repro", reproscript.FileName("bypass/bridge/socket-swap"))
	code, got := runScript(t, script, srtPath(t), "")
	if code != 1 || !strings.Contains(got, "BUG: the sandbox's relay carried the command's proxy request to the host's unix socket") {
		t.Errorf("%s: exit %d, want 1\n%s", script, code, got)
	}
	if !strings.Contains(got, "swapped ") {
		t.Errorf("%s: the command swapped no socket:\n%s", script, got)
	}
}
