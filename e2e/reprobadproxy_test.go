package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/reproscript"
)

// proxyFaultScripts are the known-bad faults that stand a proxy of sandcheck's in for srt's own,
// as TestReproStandaloneBadProxy runs their scripts: the label filter, min scripts at least, and
// the arguments of sandcheck's proxy verb that serve the fault's proxy (broken) and one that
// enforces the lists (healthy).
var proxyFaultScripts = []struct {
	fault, labels   string
	min             int
	broken, healthy string
}{
	{"bad-proxy", "bypass-matching || bypass-resolved-address || bypass-ports", 16, "--bug all", "--bug none"},
	{"open-proxy", "channel-http || channel-https || channel-socks", 3, "--open", "--bug none"},
}

// TestReproStandaloneBadProxy (issue 31): a finding of a fault that stands a proxy of sandcheck's
// in for srt's (bad-proxy, the allow-list proxy with the bugs chosen; open-proxy, one that
// enforces nothing: the seed's proxy that is up but does not enforce) gets a script that runs the
// caller's PROXY on the ports the trial's settings name, in the sandbox's host namespace with the
// script's fixture. Run as a maintainer would, with the real srt, each exits 1 given the fault's
// proxy (sandcheck's hidden verb) and 0 given one that enforces the lists. A case whose host is
// the trial's own fixture (an address in any spelling, a name only its resolver answered) gets
// none, saying why; so do the network family's summaries.
func TestReproStandaloneBadProxy(t *testing.T) {
	requireSandbox(t)
	srt := srtPath(t)
	for _, c := range proxyFaultScripts {
		t.Run(c.fault, func(t *testing.T) {
			written := faultScripts(t, "srt", c.fault, c.labels)
			ran := 0
			for _, w := range written {
				if w.Path == "" {
					if !strings.Contains(w.Why, "fixture does not have") && !sumsUp(w.Scenario) {
						t.Errorf("%s: no reproducer: %s", w.Scenario, w.Why)
					}
					continue
				}
				ran++
				for args, want := range map[string]int{c.broken: 1, c.healthy: 0} {
					proxy := "PROXY=" + bin + " __sandcheck_bad_proxy " + args
					if code, got := runScript(t, w.Path, srt, "", proxy); code != want || want == 1 && !strings.Contains(got, "BUG: the request reached") {
						t.Errorf("%s with the proxy %s: exit %d, want %d\n%s", w.Scenario, args, code, want, got)
					}
				}
			}
			if ran < c.min {
				t.Errorf("%d scripts run, want at least %d", ran, c.min)
			}
		})
	}
}

// faultScripts runs `sandcheck repro` on target under fault for the scenarios labels selects,
// which must fail (exit 1), and writes the scripts of the scenarios that failed.
func faultScripts(t *testing.T, target, fault, labels string) []reproscript.Written {
	t.Helper()
	out := t.TempDir()
	stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", target, "--fault", fault, "--label-filter", labels, "-n", "1", "--out", out)
	if code != 1 {
		t.Fatalf("sandcheck repro under %s: exit %d, want 1\n%s\n%s", fault, code, stdout, stderr)
	}
	written, err := reproscript.WriteAll(filepath.Join(out, "journal.jsonl"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return written
}
