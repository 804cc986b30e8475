package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// Claude Code itself under test (targets/claudecode): the real `claude -p` as the unprivileged
// user, its Bash tool driven by the scripted model. The seed's version (the pinned one) and the
// newest published when this was written; both are in the npm cache after `make deps` and the
// first run (an exact version needs no registry once installed).
var claudeVersions = []string{claudecode.PinnedVersion, "2.1.332"}

// claudeTrials is the trials per cell (SANDCHECK_CLAUDE_TRIALS, default 20).
func claudeTrials(t *testing.T) int { return envTrials(t, "SANDCHECK_CLAUDE_TRIALS", tierTrials()) }

func claudeTargets(versions ...string) []string {
	var a []string
	for _, v := range versions {
		a = append(a, "--target", claudecode.Name+"@"+v)
	}
	return a
}

// claudeFaults are the deterministic network faults whose seams Claude Code offers, each with
// the outcome it must produce.
func claudeFaults() []*faults.Fault {
	var out []*faults.Fault
	for _, f := range faults.All() {
		if ok, _ := f.AppliesTo(&claudecode.Target{}); ok && f.Rate == nil && f.Scope == faults.ScopeNetwork {
			out = append(out, f)
		}
	}
	return out
}

// TestClaudeCodeDetector: the healthy Claude Code is correct in every trial of the network
// scenario, both versions; every seed fault injected into it gives its outcome in every trial of
// the seed's version (and of a few trials of the newest: its runtime is the same code path).
func TestClaudeCodeDetector(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	n := claudeTrials(t)
	want := map[string]string{"": "correct"}
	var faultArgs []string
	for _, f := range claudeFaults() {
		faultArgs = append(faultArgs, "--fault", f.Name)
		want[f.Name] = string(f.Expect)
	}
	if len(want) < 8 {
		t.Fatalf("only %d faults reach claude-code: %v", len(want)-1, want)
	}
	healthy := []string{"--fault", ""}
	runs := []struct {
		version string
		n       int
		cells   []string // --fault flags
	}{
		{claudeVersions[0], n, append(healthy, faultArgs...)},
		{claudeVersions[1], n, healthy},
		{claudeVersions[1], min(n, 5), faultArgs},
	}
	seen := map[string]bool{}
	for _, r := range runs {
		args := append([]string{"-n", strconv.Itoa(r.n), "-j", "2", "--label-filter", "network"}, r.cells...)
		rep := runReport(t, append(args, claudeTargets(r.version)...)...)
		for _, o := range rep.Overall {
			seen[o.Version+"|"+o.Fault] = true
			name := o.Fault
			if name == "" {
				name = "healthy"
			}
			t.Run(o.Version+"/"+name, func(t *testing.T) {
				if o.Fault == "" {
					// Healthy: correct in every trial but where the runtime's start-up race (an
					// intermittent known finding, narrowly keyed) showed; never fail-open.
					if o.Target != claudecode.Name || o.Trials != r.n || o.Failures != o.KnownFailures() || o.FailOpen != 0 ||
						o.Outcomes["correct"]+o.KnownFailures() != r.n {
						t.Errorf("%s: outcomes %v over %d trials (%d known), want correct in all %d%s", o.Name(), o.Outcomes, o.Trials, o.KnownFailures(), r.n, whyOverall(o))
					}
					if k := o.KnownFailures(); k > 0 {
						t.Logf("%s: the relay start-up race (known, intermittent) in %d/%d trials", o.Name(), k, r.n)
					}
					return
				}
				if o.Target != claudecode.Name || o.Trials != r.n || o.Outcomes[want[o.Fault]] != r.n {
					t.Errorf("%s: outcomes %v over %d trials, want %s in all %d%s", o.Name(), o.Outcomes, o.Trials, want[o.Fault], r.n, whyOverall(o))
				}
			})
		}
	}
	for _, v := range claudeVersions {
		for f := range want {
			if !seen[v+"|"+f] {
				t.Errorf("no cell for claude-code %s fault %q", v, f)
			}
		}
	}
}

// TestClaudeCodeScenarios: every other scenario through Claude Code, both versions: filesystem
// passes in every trial outside the known findings; fail-closed, untrusted and concurrency do
// too, and every non-intermittent known finding of targets/claudecode/knownfindings.yaml shows in every
// trial (the list is pinned both ways).
func TestClaudeCodeScenarios(t *testing.T) {
	requireSandbox(t)
	n := claudeTrials(t)
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter string
		n      int
	}{
		{"filesystem", n},
		// Each fail-closed or untrusted spec is one deterministic configuration; 3 trials each
		// keep the run short (Claude Code starts in about a second, concurrency starts eight).
		{"failclosed || untrusted || concurrency", min(n, 3)},
	}
	for _, c := range cases {
		t.Run(strings.Fields(c.filter)[0], func(t *testing.T) {
			rep, rows := runReportRows(t, nil, append([]string{"-n", strconv.Itoa(c.n), "-j", "2", "--label-filter", c.filter}, claudeTargets(claudeVersions...)...)...)
			checkClaudeRows(t, rep, rows, set, c.n)
		})
	}
}

// checkClaudeRows: every row passed outside the known findings, and each non-intermittent finding
// of a scenario that ran showed in every trial of each version.
func checkClaudeRows(t *testing.T, rep *schema.Report, rows journalRows, set knownfindings.Set, n int) {
	t.Helper()
	shown := map[string]int{} // version|finding id -> trials it covered
	ran := map[string]bool{}  // version|scenario
	raced := map[string]int{} // version|scenario -> the trial the runtime's start-up race took (claudeStartRace), 0 or 1
	for _, c := range rep.Cells {
		ran[c.Version+"|"+c.Scenario] = true
		if c.Trials != n {
			t.Errorf("%s: %d trials, want %d", c.Name(), c.Trials, n)
		}
		unknown, _, ok := claudeStartRace.unknownFailures(t, c, rows)
		if ok {
			raced[c.Version+"|"+c.Scenario]++
		}
		if unknown != 0 {
			t.Errorf("%s: %d/%d failed outside the known findings: %v%s", c.Name(), unknown, c.Trials, c.Outcomes, rows.unexplained(c))
		}
		for key, k := range c.Known() {
			for _, id := range model.SplitIDs(key) {
				if strings.HasPrefix(id, claudecode.Name+":"+c.Scenario+"#") {
					shown[c.Version+"|"+id] += k.Trials
				}
			}
		}
	}
	for _, v := range claudeVersions {
		for _, f := range set.For(claudecode.Name).Findings {
			if f.Intermittent || f.Fault != "" || !ran[v+"|"+f.Scenario] || !f.Versions.Contains(v) {
				continue
			}
			if shown[v+"|"+f.ID]+raced[v+"|"+f.Scenario] != n {
				t.Errorf("known finding %s (%s) showed in %d/%d trials of %s, pinned in every trial", f.ID, f.Pos, shown[v+"|"+f.ID], n, v)
			}
		}
	}
	if len(ran) == 0 {
		t.Fatal(fmt.Sprint("no scenario ran: ", rep.Cells))
	}
}

// claudeSettingsTrials is the trials per cell of the claude-settings scenarios
// (SANDCHECK_CLAUDE_SETTINGS_TRIALS, default 1: each is one deterministic configuration, and a
// trial runs about sixty of them, one at a time so the runtime's start-up race stays rare).
func claudeSettingsTrials(t *testing.T) int {
	return envTrials(t, "SANDCHECK_CLAUDE_SETTINGS_TRIALS", 1)
}

// TestClaudeCodeSettings: Claude Code's own configurations, both versions. Every verdict is the
// one measured and pinned (targets/claudecode/knownfindings.yaml, both ways), and the ones the issue
// names read as they must: the seed's repro is its outcome 2, bypass mode's leak names the
// proxy's approval, enabled: false is never correct, failIfUnavailable: true refuses when a
// binary is missing, and false runs unsandboxed only with a warning.
func TestClaudeCodeSettings(t *testing.T) {
	requireSandbox(t)
	n := claudeSettingsTrials(t)
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	rep, out := runReportOut(t, nil, append([]string{"-n", strconv.Itoa(n), "-j", "1", "--label-filter", "claude-settings"}, claudeTargets(claudeVersions...)...)...)
	rows := readJournalRows(t, out)
	checkClaudeRows(t, rep, rows, set, n)
	row := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		row[c.Version+"|"+c.Scenario] = c
		// The only harness errors allowed: permission mode auto asking the model to judge the
		// tool call (a request the script does not answer), named as such.
		if h := c.Outcomes["harness-error"]; h > 0 {
			ex := c.Examples["harness-error"]
			if !strings.HasPrefix(c.Scenario, "claude-settings/permissions/auto") || !strings.Contains(ex.Hint, "scripted model: unexpected request") {
				t.Errorf("%s: %d harness errors%s", c.Name(), h, why(c))
			}
		}
	}
	expect := func(v, scenario, outcome, hint string) {
		t.Helper()
		c, ok := row[v+"|claude-settings/"+scenario]
		if !ok {
			t.Errorf("%s %s: no row", v, scenario)
			return
		}
		ex := c.Examples[outcome]
		if c.Outcomes[outcome] != n || !strings.Contains(ex.Hint, hint) {
			t.Errorf("%s %s: outcomes %v, want %s in all %d with a hint naming %q%s", v, scenario, c.Outcomes, outcome, n, hint, why(c))
		}
	}
	for _, v := range claudeVersions {
		expect(v, "seed-repro", "non-enforcing", "outcome 2, proxy up but not enforcing: ORG=200, EX=200 WEB_OK")
		expect(v, "permissions/bypass", "non-enforcing", "the sandbox's proxy approved the denied host")
		expect(v, "permissions/allowed-tools", "correct", "enforced")
		expect(v, "settings/enabled-false", "non-enforcing", "not sandboxed by configuration")
		expect(v, "fail-if-unavailable/true/socat-missing", "sandbox-failed", "")
		expect(v, "fail-if-unavailable/false/socat-missing", "non-enforcing", "ran unsandboxed, loudly")
		expect(v, "fail-if-unavailable/true/bridge-absent", "proxy-dead", "")
		expect(v, "unsandboxed-commands/allow-false", "correct", "")
		expect(v, "unsandboxed-commands/allow-true+bypass", "non-enforcing", "the command ran outside the sandbox")
		for _, tr := range []string{"trusted", "untrusted", "fresh"} {
			expect(v, "trust/"+tr+"/network", "correct", "")
		}
	}
	expect(claudeVersions[1], "permissions/bypass+strict-allowlist", "correct", "")
	// Auto mode puts the denied host to the model as a permission question, which the script does
	// not answer (docs/reports/claude-code-bypass-approves-denied-hosts.md says so).
	expect(claudeVersions[0], "permissions/auto", "harness-error", `SandboxNetworkAccess {\"host\":\"denied.sandcheck.test\"`)
	claudeReproducers(t, out, row)
	if file := os.Getenv("SANDCHECK_CLAUDE_TABLES"); file != "" {
		if err := os.WriteFile(file, []byte(claudeTables(row, n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// claudeTables renders the README's measured tables from the claude-settings rows: each cell the
// outcome in how many trials, and how it came about (the verdict's class, or its first words).
func claudeTables(row map[string]schema.Cell, n int) string {
	var b strings.Builder
	cell := func(v, scenario string) string {
		c, ok := row[v+"|claude-settings/"+scenario]
		if !ok {
			return "not run"
		}
		var parts []string
		for o, k := range c.Outcomes {
			p := fmt.Sprintf("%s %d/%d", o, k, c.Trials)
			if w := shortWhy(c.Examples[o].Hint); w != "" {
				p += ": " + w
			}
			parts = append(parts, p)
		}
		slices.Sort(parts)
		if len(c.Known()) > 0 {
			parts = append(parts, "(known)")
		}
		return strings.Join(parts, "; ")
	}
	head := func(cols ...string) {
		b.WriteString("| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n")
	}
	line := func(cells ...string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	fmt.Fprintf(&b, "failIfUnavailable x fault (%d trials each):\n\n", n)
	head("fault", "true, "+claudeVersions[0], "true, "+claudeVersions[1], "false, "+claudeVersions[0], "false, "+claudeVersions[1])
	for _, f := range []string{"socat-missing", "bwrap-missing", "bridge-cannot-listen", "bwrap-no-userns", "no-cap-sys-admin",
		"bridge-absent", "bridge-late", "bridge-mid", "host-bridge-dies"} {
		line("`"+f+"`", cell(claudeVersions[0], "fail-if-unavailable/true/"+f), cell(claudeVersions[1], "fail-if-unavailable/true/"+f),
			cell(claudeVersions[0], "fail-if-unavailable/false/"+f), cell(claudeVersions[1], "fail-if-unavailable/false/"+f))
	}
	b.WriteString("\nallowUnsandboxedCommands x the model asking `dangerouslyDisableSandbox: true`:\n\n")
	head("allowUnsandboxedCommands, invocation", claudeVersions[0], claudeVersions[1])
	for _, c := range []struct{ name, words string }{{"allow-false", "false, `--allowedTools Bash`"}, {"allow-true", "true, `--allowedTools Bash`"},
		{"allow-false+bypass", "false, `--dangerously-skip-permissions`"}, {"allow-true+bypass", "true, `--dangerously-skip-permissions`"}} {
		line(c.words, cell(claudeVersions[0], "unsandboxed-commands/"+c.name), cell(claudeVersions[1], "unsandboxed-commands/"+c.name))
	}
	b.WriteString("\nworkspace trust x check:\n\n")
	head("trust", "network, "+claudeVersions[0], "network, "+claudeVersions[1], "filesystem, "+claudeVersions[0], "filesystem, "+claudeVersions[1])
	for _, tr := range []string{"trusted", "untrusted", "fresh"} {
		line(tr, cell(claudeVersions[0], "trust/"+tr+"/network"), cell(claudeVersions[1], "trust/"+tr+"/network"),
			cell(claudeVersions[0], "trust/"+tr+"/filesystem"), cell(claudeVersions[1], "trust/"+tr+"/filesystem"))
	}
	b.WriteString("\npermission mode x allow-list x strictAllowlist (the network check):\n\n")
	head("invocation", claudeVersions[0], claudeVersions[1], "+ strictAllowlist, "+claudeVersions[0], "+ strictAllowlist, "+claudeVersions[1])
	for _, m := range append([]string{"bypass", "allowed-tools", "no-allow-list"}, claudecode.PermissionModes...) {
		line("`"+m+"`", cell(claudeVersions[0], "permissions/"+m), cell(claudeVersions[1], "permissions/"+m),
			cell(claudeVersions[0], "permissions/"+m+"+strict-allowlist"), cell(claudeVersions[1], "permissions/"+m+"+strict-allowlist"))
	}
	b.WriteString("\nsettings sources, precedence and contents:\n\n")
	head("scenario", claudeVersions[0], claudeVersions[1])
	var rest []string
	for k := range row {
		_, sc, _ := strings.Cut(k, "|claude-settings/")
		if strings.HasPrefix(sc, "sources/") || strings.HasPrefix(sc, "precedence/") || strings.HasPrefix(sc, "settings/") || sc == "seed-repro" {
			rest = append(rest, sc)
		}
	}
	slices.Sort(rest)
	for _, sc := range slices.Compact(rest) {
		line("`"+sc+"`", cell(claudeVersions[0], sc), cell(claudeVersions[1], sc))
	}
	return b.String()
}

// shortWhy is a claude-settings verdict's hint in a few words, for a table cell.
func shortWhy(hint string) string {
	cut := func(s string, n int) string {
		if len(s) > n {
			return s[:n] + "…"
		}
		return s
	}
	switch {
	case strings.HasPrefix(hint, "enforced"):
		return ""
	case strings.HasPrefix(hint, "refused"):
		_, why, ok := strings.Cut(hint, "tool result: ")
		if !ok {
			_, why, _ = strings.Cut(hint, "before the command ran: ")
		}
		return "refused, " + strconv.Quote(cut(strings.TrimSpace(why), 60))
	case strings.HasPrefix(hint, "ran unsandboxed, loudly"):
		return "ran unsandboxed, with a warning"
	case strings.HasPrefix(hint, "not sandboxed by configuration"):
		return "not sandboxed by configuration"
	case strings.HasPrefix(hint, "proxy-approved"):
		return "sandboxed, but the proxy approved the denied host"
	case strings.HasPrefix(hint, "unsandboxed"):
		return "ran outside the sandbox, silently"
	case strings.HasPrefix(hint, "proxy-dead"):
		return "ran against a dead proxy, silently"
	case strings.HasPrefix(hint, "outcome "):
		what, _, _ := strings.Cut(hint, ": the")
		return "seed " + what
	case strings.Contains(hint, "unexpected request"):
		return "a model request the script does not answer"
	}
	if i := strings.Index(hint, "protected/"); i >= 0 { // the filesystem checks: their first breach
		return cut(hint[i:], 70)
	}
	return cut(hint, 70)
}

// claudeRace matches the bundled runtime's start-up race, a known intermittent finding of both
// versions (targets/claudecode/knownfindings.yaml, network/channel/*): the command ran before its
// relays listened, so the first request was refused and later ones reached the proxy. A
// scenario other than the network channels meets the race too when Claude Code starts two at a
// time (-j 2) on two cores: the probe makes its first request as soon as it runs, as the seed's
// own command does. claudeStartRace excuses one such trial per row in `make test`.
var claudeRace = regexp.MustCompile(`proxy came up late: the first request was refused`)
