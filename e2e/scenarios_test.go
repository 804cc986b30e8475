package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	_ "github.com/sandcheck/sandcheck/targets/firejail" // the known findings read are theirs
	_ "github.com/sandcheck/sandcheck/targets/srt"
)

// runReport runs `sandcheck run` with args and returns its report.json.
func runReport(t *testing.T, args ...string) *schema.Report {
	t.Helper()
	return runReportEnv(t, nil, args...)
}

// why names, for a failure message, the example hint of every outcome in a row.
func why(c schema.Cell) string {
	var b strings.Builder
	for o, ex := range c.Examples {
		fmt.Fprintf(&b, "\n    %s: %s %s", o, ex.Hint, ex.Error)
	}
	return b.String()
}

// rows indexes report rows by fault and scenario.
func rows(rep *schema.Report) map[string]schema.Cell {
	m := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		m[c.Fault+"|"+c.Scenario] = c
	}
	return m
}

// TestScenariosOnHealthySRT: the healthy srt passes every filesystem, fail-closed and untrusted
// spec in 20/20 trials, except where its documented known findings cover the failure in full,
// and every non-intermittent finding shows in 20/20 trials: the list is pinned in both directions,
// by the narrow finding ids the trials recorded (targets/srt/knownfindings.yaml).
func TestScenariosOnHealthySRT(t *testing.T) {
	requireSandbox(t)
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	rep := runReport(t, "-n", fmt.Sprint(trials), "-j", "2", "--label-filter", "filesystem || failclosed || untrusted")
	seen := map[string]bool{}
	shown := map[string]int{} // finding id -> trials it covered
	for _, c := range rep.Cells {
		seen[c.Scenario] = true
		if c.Trials != trials {
			t.Errorf("%s: %d trials, want %d", c.Scenario, c.Trials, trials)
			continue
		}
		for key, k := range c.Known() {
			for _, id := range model.SplitIDs(key) {
				if !strings.HasPrefix(id, "srt:"+c.Scenario+"#") && !c.Aggregate {
					t.Errorf("%s: covered by %s, a finding of another scenario", c.Scenario, id)
				}
				if strings.HasPrefix(id, "srt:"+c.Scenario+"#") {
					shown[id] += k.Trials
				}
			}
		}
		if unknown := c.Failures - c.KnownFailures(); unknown != 0 {
			t.Errorf("%s: %d/%d failed outside the known findings: %v%s", c.Scenario, unknown, c.Trials, c.Outcomes, why(c))
		}
	}
	for _, f := range set.For("srt").Findings {
		if f.Intermittent || f.Fault != "" || !seen[f.Scenario] {
			continue
		}
		// The tmpdir finding exists only while /tmp/claude does not (another srt version, or
		// Claude Code, creates it): the host decides, not the sandbox under test.
		if _, err := os.Stat("/tmp/claude"); err == nil && strings.HasPrefix(f.Check, "/tmp/claude/") {
			t.Logf("%s not pinned: /tmp/claude exists on this host", f.ID)
			continue
		}
		if shown[f.ID] != trials {
			t.Errorf("known finding %s (%s) showed in %d/%d trials, pinned in every trial (update targets/srt/knownfindings.yaml)", f.ID, f.Pos, shown[f.ID], trials)
		}
	}
	for _, want := range []string{"filesystem/secret/read", "filesystem/escape/symlink", "failclosed/socat-missing",
		"failclosed/bwrap-no-userns", "untrusted/settings-missing", "untrusted/fresh-home"} {
		if !seen[want] {
			t.Errorf("scenario %s did not run", want)
		}
	}
}

// TestScenarioFaultsAreFlagged: each scenario's known-bad sandbox, a fault injected into the real
// one, is flagged in every trial.
func TestScenarioFaultsAreFlagged(t *testing.T) {
	requireSandbox(t)
	// Each fault only against the scenarios it targets: every srt session costs half a second.
	r := rows(runReport(t, "-n", fmt.Sprint(trials), "-j", "2", "--label-filter", "filesystem",
		"--fault", "fs-rw-root", "--fault", "fs-drop-deny-read"))
	for k, v := range rows(runReport(t, "-n", fmt.Sprint(trials), "-j", "2", "--label-filter", "failclosed || untrusted",
		"--fault", "degraded-no-proxy")) {
		r[k] = v
	}
	expect := func(fault, scenario, outcome string) {
		t.Helper()
		c, ok := r[fault+"|"+scenario]
		if !ok {
			t.Errorf("%s under %s: no row", scenario, fault)
			return
		}
		if c.Outcomes[outcome] != trials {
			t.Errorf("%s under %s: outcomes %v, want %s in all %d%s", scenario, fault, c.Outcomes, outcome, trials, why(c))
		}
	}
	for _, s := range []string{"outside/tmp", "outside/home", "outside/parent", "escape/symlink", "escape/dotdot", "escape/proc-root"} {
		expect("fs-rw-root", "filesystem/"+s, "non-enforcing")
	}
	// The sandbox's user cannot write /etc even without a sandbox: there the check says so
	// (not-applicable) instead of crediting the sandbox; as root the escape shows.
	expect("fs-rw-root", "filesystem/outside/etc", "not-applicable")
	for k, v := range rows(runReport(t, "-n", fmt.Sprint(trials), "-j", "2", "--label-filter", "fs-outside", "--fault", "fs-rw-root", "--user", "root")) {
		r["root:"+k] = v
	}
	expect("root:fs-rw-root", "filesystem/outside/etc", "non-enforcing")
	for _, s := range []string{"secret/read", "secret/via-symlink", "secret/proc-root"} {
		expect("fs-drop-deny-read", "filesystem/"+s, "non-enforcing")
	}
	// A sandbox that silently runs with a dead proxy fails every honesty spec.
	for key, c := range r {
		fault, scenario, _ := strings.Cut(key, "|")
		if fault != "degraded-no-proxy" || !(strings.HasPrefix(scenario, "failclosed/") || strings.HasPrefix(scenario, "untrusted/")) {
			continue
		}
		if c.Failures != trials {
			t.Errorf("%s under degraded-no-proxy: %d/%d flagged (%v), want all%s", scenario, c.Failures, trials, c.Outcomes, why(c))
		}
	}
}

// TestConcurrency: separate workspaces stay correct; a shared network namespace is flagged.
func TestConcurrency(t *testing.T) {
	requireSandbox(t)
	const n = 5
	rep := runReport(t, "-n", fmt.Sprint(n), "-j", "1", "--label-filter", "concurrency-separate-workspaces",
		"--fault", "", "--fault", "netns-shared")
	r := rows(rep)
	if c := r["|concurrency/separate-workspaces/k4"]; c.Outcomes["correct"] != n {
		t.Errorf("healthy separate workspaces: %v, want %d correct", c.Outcomes, n)
	}
	if c := r["netns-shared|concurrency/separate-workspaces/k4"]; c.Outcomes["non-enforcing"] != n {
		t.Errorf("netns-shared: %v, want %d non-enforcing", c.Outcomes, n)
	}
}
