package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/suites/concurrency"
	"github.com/sandcheck/sandcheck/suites/failclosed"
	"github.com/sandcheck/sandcheck/suites/filesystem"
	"github.com/sandcheck/sandcheck/suites/untrusted"
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

// TestScenariosOnHealthySRT: the healthy srt, as the unprivileged account (the shared run of the
// default matrix, healthySRTRun), passes every filesystem, fail-closed and untrusted spec in
// every trial (tierTrials), except where its documented known findings cover the failure
// in full, and every non-intermittent finding shows in every trial: the list is pinned in both directions,
// by the narrow finding ids the trials recorded (targets/srt/knownfindings.yaml).
func TestScenariosOnHealthySRT(t *testing.T) {
	requireSandbox(t)
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	shared, _, trials := healthySRTRun(t)
	rep := rowsOf(shared, "unprivileged", "filesystem", "failclosed", "untrusted")
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
// one, is flagged in every trial: the families' known-bads (suites/NAME KnownBads, which `sandcheck
// list` shows), each run against its family's specs only (every srt session costs half a second).
func TestScenarioFaultsAreFlagged(t *testing.T) {
	requireSandbox(t)
	trials := tierTrials()
	families := []struct {
		label string
		flags []catalog.Flags
	}{
		{"filesystem", filesystem.KnownBads},
		{"failclosed || untrusted", append(slices.Clone(failclosed.KnownBads), untrusted.KnownBads...)},
	}
	r := map[string]schema.Cell{} // USER:FAULT|SCENARIO
	for _, fam := range families {
		byUser := map[string][]string{}
		var users []string
		for _, f := range fam.flags {
			if f.Target != "srt" {
				t.Fatalf("%s: known-bad %s: these runs are srt's", fam.label, f.KnownBad)
			}
			if _, ok := byUser[f.User]; !ok {
				users = append(users, f.User)
			}
			if !slices.Contains(byUser[f.User], f.Fault) {
				byUser[f.User] = append(byUser[f.User], f.Fault)
			}
		}
		for _, user := range users {
			args := []string{"-n", fmt.Sprint(trials), "-j", "2", "--label-filter", fam.label}
			if user != "" {
				args = append(args, "--user", user)
			}
			for _, f := range byUser[user] {
				args = append(args, "--fault", f)
			}
			for k, v := range rows(runReport(t, args...)) {
				r[user+":"+k] = v
			}
		}
	}
	row := func(user, fault, scenario string) (schema.Cell, bool) {
		t.Helper()
		c, ok := r[user+":"+fault+"|"+scenario]
		if !ok {
			t.Errorf("%s under %s (user %q): no row", scenario, fault, user)
		}
		return c, ok
	}
	for _, fam := range families {
		for _, f := range fam.flags {
			for _, s := range f.Scenarios {
				c, ok := row(f.User, f.Fault, s)
				switch {
				case !ok:
				case f.Expect == "" && c.Failures != trials:
					t.Errorf("%s under %s: %d/%d flagged (%v), want all%s", s, f.KnownBad, c.Failures, trials, c.Outcomes, why(c))
				case f.Expect != "" && c.Outcomes[string(f.Expect)] != trials:
					t.Errorf("%s under %s: outcomes %v, want %s in all %d%s", s, f.KnownBad, c.Outcomes, f.Expect, trials, why(c))
				}
			}
		}
	}
	// The sandbox's user cannot write /etc even without a sandbox: there the check says so
	// (not-applicable) instead of crediting the sandbox; as root the escape shows (above).
	if c, ok := row("", "fs-rw-root", "filesystem/outside/etc"); ok && c.Outcomes["not-applicable"] != trials {
		t.Errorf("filesystem/outside/etc under fs-rw-root, unprivileged: outcomes %v, want not-applicable in all %d%s", c.Outcomes, trials, why(c))
	}
}

// TestConcurrency: separate workspaces stay correct (as both users, in the shared run of the
// default matrix); a shared network namespace is flagged.
func TestConcurrency(t *testing.T) {
	requireSandbox(t)
	shared, _, m := healthySRTRun(t)
	for _, user := range []string{"root", "unprivileged"} {
		r := rows(rowsOf(shared, user, "concurrency"))
		if c := r["|concurrency/separate-workspaces/k4"]; c.Outcomes["correct"] != m {
			t.Errorf("healthy separate workspaces as %s: %v, want %d correct", user, c.Outcomes, m)
		}
	}
	const n = 5
	args := []string{"-n", fmt.Sprint(n), "-j", "1", "--label-filter", "concurrency-separate-workspaces"}
	for _, f := range concurrency.KnownBads { // the family's known-bads, as `sandcheck list` shows them
		args = append(args, "--fault", f.Fault)
	}
	r := rows(runReport(t, args...))
	for _, f := range concurrency.KnownBads {
		for _, s := range f.Scenarios {
			if c, ok := r[f.Fault+"|"+s]; !ok || c.Outcomes[string(f.Expect)] != n {
				t.Errorf("%s under %s: %v, want %d %s (a row: %v)", s, f.KnownBad, c.Outcomes, n, f.Expect, ok)
			}
		}
	}
}
