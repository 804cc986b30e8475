package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/suites/bypass/knownbad"
)

// The bypass scenarios (issue 12) end to end: every class's known-bad, a fault in the real
// sandbox (or a real published release with the bug), flagged in every trial; the healthy srt
// passing every bypass scenario but its pinned findings, which show in every trial. Run each
// test under the heavy lock, alone:
//
//	flock /tmp/sandcheck-heavy.lock go test -count=1 -run 'TestBypassHealthy$' ./e2e/

// bypassClasses are the classes; each must have run in the healthy test and have a known-bad.
var bypassClasses = []string{"matching", "ports", "resolved-address", "unix-sockets", "other-egress", "policy-semantics", "tty", "fs-interplay", "policy-tamper", "proxy-semantics", "dns", "git", "persistence", "privilege", "globs", "setup", "bridge", "userns", "nesting", "parent-proxy", "secrets"}

// claimedClasses are bypass classes only a sandbox that claims their capability is judged on
// (methods: Codex's limited mode; private-addresses: its guard against names resolving to
// private addresses); each has a known-bad all the same.
var claimedClasses = []string{"methods", "private-addresses"}

// byTarget indexes report rows by target, fault and scenario.
func byTarget(rep *schema.Report) map[string]schema.Cell {
	m := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		t := c.Target
		if c.Version != "" {
			t += "@" + c.Version
		}
		m[t+"|"+c.Fault+"|"+c.Scenario] = c
	}
	return m
}

// TestBypassHealthy: healthy srt 0.0.83 (as the unprivileged account, in the shared run of the
// default matrix, healthySRTRun) passes every bypass scenario in every trial but where
// its documented known findings cover the failure in full, and every one of those findings
// shows in every trial (pinned both ways). The deny-all targets likewise, at 5 trials.
func TestBypassHealthy(t *testing.T) {
	requireSandbox(t)
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	shared, rows, n := healthySRTRun(t)
	classes := checkBypassTarget(t, "srt", n, rowsOf(shared, "unprivileged", "bypass"), rows, set.For("srt").Findings)
	for _, cl := range bypassClasses {
		if !classes[cl] {
			t.Errorf("srt: no bypass/%s scenario was judged", cl)
		}
	}
	const few = 5
	rep, rows := runReportRows(t, nil, "-n", fmt.Sprint(few), "-j", "2", "--label-filter", "bypass", "--target", "bwrap", "--target", "firejail", "--target", "codex")
	for _, target := range []string{"bwrap", "firejail", "codex"} {
		checkBypassTarget(t, target, few, rep, rows, set.For(target).Findings)
	}
}

// checkBypassTarget: each of target's bypass rows ran n trials and failed only where known
// findings cover it, but for one trial per row srt may have refused to start on a starved
// machine (srtStarvedRace); each pinned finding of findings showed in every trial of its row but
// that one. It returns the classes that ran (not all not-applicable).
func checkBypassTarget(t testing.TB, target string, n int, rep *schema.Report, rows journalRows, findings []knownfindings.Finding) map[string]bool {
	t.Helper()
	shown := map[string]int{}
	excused := map[string]int{} // scenario -> trials excused in its row (0 or 1)
	classes := map[string]bool{}
	for _, c := range rep.Cells {
		if c.Target != target {
			continue
		}
		if c.Trials != n {
			t.Errorf("%s %s: %d trials, want %d", target, c.Scenario, c.Trials, n)
			continue
		}
		if c.Outcomes["not-applicable"] != n {
			classes[strings.Split(c.Scenario, "/")[1]] = true
		}
		for key, k := range c.Known() {
			for _, id := range model.SplitIDs(key) {
				shown[id] += k.Trials
			}
		}
		unknown, _, ok := srtStarvedRace.unknownFailures(t, c, rows)
		if ok {
			excused[c.Scenario]++
		}
		if unknown != 0 {
			t.Errorf("%s %s: %d/%d failed outside the known findings: %v%s", target, c.Scenario, unknown, c.Trials, c.Outcomes, rows.unexplained(c))
		}
	}
	for _, f := range findings {
		if !strings.HasPrefix(f.Scenario, "bypass/") || f.Intermittent || f.Fault != "" || f.User != "" {
			continue
		}
		if want := n - excused[f.Scenario]; shown[f.ID] != want {
			t.Errorf("known finding %s (%s) showed in %d/%d trials, pinned in every trial (%d excused)", f.ID, f.Pos, shown[f.ID], n, excused[f.Scenario])
		}
	}
	return classes
}

// TestBypassKnownBadsFlagged: every bypass class's known-bad is flagged non-enforcing in every
// trial, each scenario it reproduces; together they cover every bypass scenario.
// SANDCHECK_BYPASS_BAD=N runs only the Nth (0-based), to keep each held lock short.
func TestBypassKnownBadsFlagged(t *testing.T) {
	requireSandbox(t)
	covered := map[string]bool{}
	for i, b := range knownbad.Faults {
		for _, s := range b.Scenarios {
			covered[s] = true
		}
		if only := os.Getenv("SANDCHECK_BYPASS_BAD"); only != "" && only != fmt.Sprint(i) {
			continue
		}
		t.Run(b.Target+"/"+b.Fault, func(t *testing.T) {
			trials := tierTrials()
			rows := byTarget(runReportEnv(t, []string{"SANDCHECK_NPM_OFFLINE=1"},
				"-n", fmt.Sprint(trials), "-j", "2", "--label-filter", b.Labels, "--target", b.Target, "--fault", b.Fault))
			for _, s := range b.Scenarios {
				c, ok := rows[b.Target+"|"+b.Fault+"|"+s]
				if !ok {
					t.Errorf("%s: no row (rows: %v)", s, keys(rows))
					continue
				}
				if c.Outcomes["non-enforcing"] != trials {
					t.Errorf("%s under %s on %s: %v, want non-enforcing in all %d%s", s, b.Fault, b.Target, c.Outcomes, trials, why(c))
				}
			}
		})
	}
	// The known-bads no fault stands in for: the release with the bug flagged in every trial,
	// the release that fixed it passed in every trial; or, where no release has fixed it yet
	// (knownbad.Open), the pinned release alone, a known finding of its own.
	for _, b := range append(append([]knownbad.Release{}, knownbad.Releases...), knownbad.Open...) {
		for _, s := range b.Scenarios {
			covered[s] = true
		}
		if os.Getenv("SANDCHECK_BYPASS_BAD") != "" {
			continue
		}
		want := map[string]model.Outcome{b.Open: model.NonEnforcing}
		args := []string{"-n", fmt.Sprint(tierTrials()), "-j", "2", "--label-filter", b.Labels, "--target", b.Target + "@" + b.Open, "--user", b.User}
		name := b.Target + "@" + b.Open + "/open"
		if b.Fixed != "" {
			want[b.Fixed], name = model.Correct, b.Target+"@"+b.Open
			args = append(args, "--target", b.Target+"@"+b.Fixed)
		}
		t.Run(name, func(t *testing.T) {
			trials := tierTrials()
			rows := byTarget(runReportEnv(t, []string{"SANDCHECK_NPM_OFFLINE=1"}, args...))
			for _, s := range b.Scenarios {
				for release, want := range want {
					c, ok := rows[b.Target+"@"+release+"||"+s]
					if !ok {
						t.Errorf("%s on %s: no row (rows: %v)", s, release, keys(rows))
						continue
					}
					if c.Outcomes[string(want)] != trials {
						t.Errorf("%s on %s %s as %s: %v, want %s in all %d%s", s, b.Target, release, b.User, c.Outcomes, want, trials, why(c))
					}
				}
			}
		})
	}
	// Every case has a known-bad somewhere in the list.
	for _, cl := range append(append([]string{}, bypassClasses...), claimedClasses...) {
		found := false
		for s := range covered {
			found = found || strings.HasPrefix(s, "bypass/"+cl+"/")
		}
		if !found {
			t.Errorf("class %s has no known-bad", cl)
		}
	}
}

func keys(m map[string]schema.Cell) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPrivilegeAsRoot: the privilege class run by root on every target. What is pinned for root
// (bubblewrap 0.8.0 and firejail 0.9.72 leave the command root's capabilities; Claude Code
// 2.1.215's bundled runtime too, which also lets the command ptrace its unfiltered seccomp
// helper) shows in every trial, as a known finding; everything else is refused in every trial
// (srt 0.0.83, Codex 0.171.0, Claude Code 2.1.332), as docs/results/findings.md says.
func TestPrivilegeAsRoot(t *testing.T) {
	requireSandbox(t)
	const n = 2
	rep := runReportEnv(t, []string{"SANDCHECK_NPM_OFFLINE=1"}, "-n", fmt.Sprint(n), "-j", "2", "--label-filter", "bypass-privilege", "--user", "root",
		"--target", "srt", "--target", "bwrap", "--target", "firejail", "--target", "codex",
		"--target", "claude-code@2.1.215", "--target", "claude-code@2.1.332")
	pinned := map[string]bool{}
	for _, target := range []string{"bwrap", "firejail", "claude-code@2.1.215"} {
		for _, c := range []string{"remount-rw", "unmount-deny-read", "unmount-protected"} {
			pinned[target+"|bypass/privilege/"+c] = target != "bwrap" && target != "firejail" || c != "unmount-protected"
		}
	}
	// Claude Code 2.1.215 as root lets the command ptrace a process without its seccomp filter.
	pinned["claude-code@2.1.215|bypass/privilege/ptrace-helper"] = true
	seen := map[string]bool{}
	for key, c := range byTarget(rep) {
		target, scenario, _ := strings.Cut(strings.Replace(key, "||", "|", 1), "|")
		row := target + "|" + scenario
		seen[row] = true
		switch {
		case c.Trials != n:
			t.Errorf("%s: %d trials, want %d", row, c.Trials, n)
		case pinned[row] && (c.Outcomes[string(model.NonEnforcing)] != n || c.KnownFailures() != n):
			t.Errorf("%s: %v (%d known), want non-enforcing in all %d, each a known finding%s", row, c.Outcomes, c.KnownFailures(), n, why(c))
		case !pinned[row] && c.Failures != 0:
			t.Errorf("%s: %v, want no failure as root%s", row, c.Outcomes, why(c))
		}
	}
	for row, open := range pinned {
		if open && !seen[row] {
			t.Errorf("%s: no row", row)
		}
	}
}
