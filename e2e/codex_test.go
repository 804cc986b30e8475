package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/targets/codex"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Codex's allow-list proxy across its published releases, each judged on the network scenario:
//   - 0.130.0 has no network_proxy feature: not-applicable, saying so, never a failure;
//   - 0.131.0, the first release with it, takes a platform under `codex sandbox` (`sandbox
//     linux`), and lets a direct connection past its proxy: the denied host is reached;
//   - 0.138.0, the last release with that escape (the proxy was not made the sandbox's only way
//     out while it ran from a configured profile);
//   - 0.139.0, the release that fixed it: correct.
const (
	codexNoProxy    = "0.130.0"
	codexFirst      = "0.131.0"
	codexLastOpen   = "0.138.0"
	codexFixedProxy = "0.139.0"
)

func TestCodexProxyReleases(t *testing.T) {
	requireSandbox(t)
	out := t.TempDir()
	args := []string{"run", "--plain", "--out", out, "-n", "2", "-j", "2", "--label-filter", "network"}
	for _, v := range []string{codexNoProxy, codexFirst, codexLastOpen, codexFixedProxy} {
		args = append(args, "--target", "codex@"+v)
	}
	_, stderr, code := sandcheckExit(t, nil, args...)
	if code != 1 { // the releases with the escape fail open
		t.Fatalf("exit %d, want 1 (fail-open):\n%s", code, stderr)
	}
	rep, err := schema.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		if c.Target == "codex" && (c.Scenario == "network/channel/direct" || c.Scenario == model.ScenarioDrivable) {
			direct[c.Version] = c
		}
	}
	for v, want := range map[string]string{codexFirst: "non-enforcing", codexLastOpen: "non-enforcing", codexFixedProxy: "correct"} {
		if c := direct[v]; c.Outcomes[want] != 2 {
			t.Errorf("codex %s network/channel/direct: %v, want %s 2/2%s", v, c.Outcomes, want, why(c))
		}
	}
	if c := direct[codexNoProxy]; c.Outcomes["not-applicable"] != 2 || !strings.Contains(why(c), "network_proxy") {
		t.Errorf("codex %s (no proxy feature): %v, want not-applicable naming network_proxy%s", codexNoProxy, c.Outcomes, why(c))
	}
}

// TestBisectCodexProxyFix finds the release that closed the escape: between 0.136.0 and 0.142.0
// the first release whose direct channel holds is 0.139.0. Long tier: it installs up to seven
// releases.
func TestBisectCodexProxyFix(t *testing.T) {
	requireSandbox(t)
	skip.UnlessLong(t, "installs up to seven codex releases")
	stdout, stderr, code := sandcheckExit(t, nil, "bisect", "--target", "codex", "--label-filter", "network && channel-direct",
		"--good", "0.136.0", "--bad", "0.142.0", "-n", "5", "--out", t.TempDir(), "--json")
	var res struct {
		FirstBad string `json:"first_bad"`
		LastGood string `json:"last_good"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if code != 0 || res.FirstBad != codexFixedProxy || res.LastGood != codexLastOpen {
		t.Fatalf("exit %d: %+v, want first %s, last like the old %s\n%s", code, res, codexFixedProxy, codexLastOpen, stderr)
	}
}

// TestCodexProxy: the pinned Codex with its allow-list proxy through the network, filesystem,
// fail-closed and untrusted families and the bypass classes: healthy, every applicable spec passes
// in every trial but where its known findings (targets/codex/knownfindings.yaml) cover it, each
// of those in every trial; the proxy specs apply (they are not-applicable only for the deny-all
// shape); faults through Codex's own seam are flagged every time, and one through srt's seams
// is not-applicable with the reason, never a pass. Nothing of it leaves the fixture ranges
// (stayInFixture).
func TestCodexProxy(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	if _, err := codex.Locate(""); err != nil {
		skip.Missing(t, "%v", err)
	}
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	rep := runReport(t, "--target", "codex", "-n", fmt.Sprint(n), "-j", "2",
		"--label-filter", "network || filesystem || failclosed || bypass")
	// The faults are judged on the network scenario only (below), so only it runs under them:
	// the other families under a fault would start Codex some fifty times for rows no check reads.
	faulty := runReport(t, "--target", "codex", "-n", fmt.Sprint(n), "-j", "2", "--label-filter", "network",
		"--fault", "netns-shared", "--fault", "policy-allows-denied", "--fault", "open-proxy")
	rep.Cells = append(rep.Cells, faulty.Cells...)
	// The untrusted family alone: with a dead caller proxy (proxy-env-dead) `codex sandbox` may
	// outlive its command (targets/codex/knownfindings.yaml: 6 of 6 trials at -j 2, also seen at
	// -j 1 on a loaded machine), a timeout that is Codex's, not the harness's: it may take any
	// trial (3 of 3 at -j 1 in one `make test` here), and every other trial shows the known
	// finding; nothing else, and nothing fails open.
	untrusted := runReport(t, "--target", "codex", "-n", fmt.Sprint(n), "-j", "1", "--label-filter", "untrusted", "--max-harness-rate", "1")
	for _, c := range untrusted.Cells {
		if c.Scenario != "untrusted/proxy-env-dead" {
			rep.Cells = append(rep.Cells, c)
			continue
		}
		k := c.Known()["codex:untrusted/proxy-env-dead#proxy-env-dead"].Trials
		if k+c.Outcomes["timeout"] != n {
			t.Errorf("untrusted/proxy-env-dead: %v (known %d), want the known finding or a timeout in every trial%s", c.Outcomes, k, why(c))
		}
	}
	r := rows(rep)
	shown := map[string]int{}
	for _, c := range rep.Cells {
		if c.Fault != "" {
			continue
		}
		for key, k := range c.Known() {
			for _, id := range model.SplitIDs(key) {
				shown[id] += k.Trials
			}
		}
		if unknown := c.Failures - c.KnownFailures(); unknown != 0 {
			t.Errorf("healthy codex %s: %d/%d failed outside the known findings: %v%s", c.Scenario, unknown, c.Trials, c.Outcomes, why(c))
		}
	}
	for _, f := range set.For("codex").Findings {
		if f.Fault == "" && f.User == "" && !f.Intermittent && shown[f.ID] != n {
			t.Errorf("known finding %s showed in %d/%d trials, pinned in every trial", f.ID, shown[f.ID], n)
		}
	}
	for _, s := range proxyOnly {
		if row := r["|"+s]; row.Outcomes["correct"] != n {
			t.Errorf("%s: %v, want correct in all %d (the proxy shape reaches the allowed host)%s", s, row.Outcomes, n, why(row))
		}
	}
	for fault, s := range map[string]string{"netns-shared": "network/channel/direct", "policy-allows-denied": "network/channel/http"} {
		if row := r[fault+"|"+s]; row.Outcomes["non-enforcing"] != n {
			t.Errorf("%s under %s: %v, want non-enforcing in all %d%s", s, fault, row.Outcomes, n, why(row))
		}
	}
	if row, ok := r["open-proxy|"+model.ScenarioDrivable]; !ok || row.Outcomes["not-applicable"] != n || !strings.Contains(why(row), "proxy-ports") {
		t.Errorf("open-proxy on codex: %v, want not-applicable naming the seam it lacks%s", row.Outcomes, why(row))
	}
}

// TestCodexAgentModes: Codex as its users run it, `codex exec` with its shell tool asked by the
// scripted model to run the probe, one cell per agent mode (matrix/examples/codex-agent.yaml).
// The sandboxed modes hold; the two that turn the sandbox off are the known-bads, flagged on the
// direct channel every time; the profile's proxy stops the command at the first request it
// refuses (Codex's words kept), which is a sandbox failure, never a pass. Codex's own start-up
// traffic is kept off the fixture (codex.Quiet): no cell may show egress it did not cause, and
// nothing of it leaves the fixture ranges (stayInFixture).
func TestCodexAgentModes(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	if _, err := codex.Locate(""); err != nil {
		skip.Missing(t, "%v", err)
	}
	const n = 2
	rep := runReport(t, "--matrix", "../matrix/examples/codex-agent.yaml", "-n", fmt.Sprint(n), "-j", "2")
	mode := func(c schema.Cell) string {
		id, _, _ := strings.Cut(c.CellID, ".")
		return strings.TrimPrefix(id, codex.ExecName+"-")
	}
	seen := map[string]bool{}
	for _, c := range rep.Cells {
		m := mode(c)
		seen[m] = true
		switch m {
		case codex.ModeWorkspaceWrite, codex.ModeReadOnly, codex.ModeFullAuto:
			if c.Failures != 0 || c.Trials != n {
				t.Errorf("%s %s: %v, want no failure in %d trials%s", m, c.Scenario, c.Outcomes, n, why(c))
			}
		case codex.ModeDangerFullAccess, codex.ModeBypass:
			if c.Scenario == "network/channel/direct" && c.Outcomes["non-enforcing"] != n {
				t.Errorf("%s %s: %v, want non-enforcing in all %d (no sandbox)%s", m, c.Scenario, c.Outcomes, n, why(c))
			}
		case codex.ModeProfile:
			if c.Scenario == "network/channel/http" && (c.Outcomes["sandbox-failed"] != n || !strings.Contains(why(c), "was blocked")) {
				t.Errorf("%s %s: %v, want sandbox-failed in all %d, Codex saying the request was blocked%s", m, c.Scenario, c.Outcomes, n, why(c))
			}
			if c.Outcomes["non-enforcing"] != 0 {
				t.Errorf("%s %s: %v: the profile's proxy let something through%s", m, c.Scenario, c.Outcomes, why(c))
			}
		}
	}
	for _, m := range codex.ExecModes {
		if !seen[m] {
			t.Errorf("mode %s: no cell", m)
		}
	}
}
