package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	_ "github.com/sandcheck/sandcheck/targets/firejail" // the known findings read are theirs
	_ "github.com/sandcheck/sandcheck/targets/srt"
	"github.com/sandcheck/sandcheck/wire/journal"
)

var local = model.Cell{ID: "srt|local|", Target: "srt", Host: "local"}

// correct is a healthy trial: every scenario correct.
func correct(scen ...string) model.Record {
	r := model.Record{Cell: local, Outcome: model.Correct}
	for _, s := range scen {
		r.Scenarios = append(r.Scenarios, model.Scenario{Name: s, Outcome: model.Correct, Pass: true})
	}
	return r
}

// killed is a trial the runner killed at its deadline, with whatever egress the fixture servers
// streamed before that (outcome as the runner recorded it).
func killed(o model.Outcome, egress ...string) model.Record {
	return model.Record{Cell: local, Outcome: o, TimedOut: true, Egress: egress, Hint: "trial passed its 20s deadline"}
}

// failing is a trial whose scenario s failed with o, breaching what, each breach covered by
// known (", "-joined ids, or "").
func failing(s string, o model.Outcome, known string, breaches ...string) model.Record {
	var bs []model.Breach
	for _, b := range breaches {
		bs = append(bs, model.Breach{Outcome: o, What: b, Known: known})
	}
	return model.Record{Cell: local, Outcome: o, Scenarios: []model.Scenario{{Name: s, Outcome: o, Breaches: bs, Hint: string(o) + " in " + s}}}
}

// srtTrial is a healthy srt trial as it reads in a journal: the network correct, srt's accepted
// filesystem findings (one fail-open, one fail-closed) shown.
func srtTrial(egress ...string) model.Record {
	r := correct("network/seed")
	r.Outcome, r.Egress = model.NonEnforcing, egress
	r.Scenarios = append(r.Scenarios,
		model.Scenario{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Breaches: []model.Breach{
			{Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit", Known: hooksID}}},
		model.Scenario{Name: "filesystem/workspace/tmpdir", Outcome: model.AllowedBlocked, Breaches: []model.Breach{
			{Outcome: model.AllowedBlocked, What: "write /tmp/claude/sandcheck-fs-* refused", Known: tmpdirID}}})
	return r
}

const (
	hooksID   = "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"
	tmpdirID  = "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*"
	srtPolicy = "accept_known: [\"" + hooksID + "\", \"" + tmpdirID + "\"]\n"
)

// times repeats r n times.
func times(n int, r model.Record) []model.Record {
	out := make([]model.Record, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// gateJournal writes recs (trial indexes in order) as a real journal, turns it into report.json
// as `sandcheck report` does, and gates it with policyYAML as `sandcheck gate` does.
func gateJournal(t *testing.T, policyYAML string, recs ...[]model.Record) (Result, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := journal.OpenWriter(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	trial := map[string]int{}
	for _, group := range recs {
		for _, r := range group {
			r.V, r.RunID, r.Trial = journal.SchemaVersion, "run-1", trial[r.Cell.ID]
			trial[r.Cell.ID]++
			if err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, _, err := aggregate.FromJournals([]string{w.Path()}, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := format.WriteAll(dir, rep, format.Options{}); err != nil {
		t.Fatal(err)
	}
	pol := ""
	if policyYAML != "" {
		pol = filepath.Join(dir, "gate.yaml")
		if err := os.WriteFile(pol, []byte(policyYAML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := File(filepath.Join(dir, format.JSONFile), pol)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	return res, buf.String()
}

func TestGateOnJournals(t *testing.T) {
	const seed, fsw = "network/seed", "filesystem/write-outside"
	cases := []struct {
		name   string
		policy string
		recs   [][]model.Record
		rules  string   // violations, as rule@cell
		want   []string // lines the output must hold
		not    []string // text it must not hold
	}{
		{
			// The second audit's first finding: an accepted fail-open finding in every trial
			// must not hide egress that no verdict accounts for in one of them.
			name:   "egress beside an accepted fail-open finding",
			policy: srtPolicy,
			recs:   [][]model.Record{times(79, srtTrial()), {srtTrial("denied dns A q-1.denied.sandcheck.test on denied.sandcheck.test:53 from 198.19.0.2:4000")}},
			rules:  "non-enforcing@srt@local",
			want: []string{"non-enforcing: srt@local: fail-open in 1 of 80 trials: egress no verdict accounts for: denied dns A q-1.denied.sandcheck.test",
				"ACCEPTED " + hooksID},
		},
		{
			name:   "srt's accepted findings alone pass",
			policy: srtPolicy,
			recs:   [][]model.Record{times(80, srtTrial())},
			want:   []string{"PASS: 3 rows in 1 cells within policy; 2 known finding(s) accepted by policy"},
		},
		{
			name:  "80 correct and 10 timeouts without egress fail the harness bound",
			recs:  [][]model.Record{times(80, correct(seed)), times(10, killed(model.Timeout))},
			rules: "harness-bound@srt@local",
			want:  []string{"harness-bound: srt@local: 10 of 90 trials (11.1%) were harness errors or timeouts (timeout x10), policy allows 5.0%"},
		},
		{
			name: "80 correct and 4 timeouts are within the bound",
			recs: [][]model.Record{times(80, correct(seed)), times(4, killed(model.Timeout))},
			want: []string{"PASS: 1 rows in 1 cells within policy"},
		},
		{
			name:   "a looser harness bound lets the 10 timeouts through",
			policy: "max_harness_rate: 0.2\n",
			recs:   [][]model.Record{times(80, correct(seed)), times(10, killed(model.Timeout))},
		},
		{
			name:  "a timeout with egress evidence is fail-open, not harness trouble",
			recs:  [][]model.Record{times(80, correct(seed)), times(9, killed(model.Timeout)), {killed(model.NonEnforcing, "denied http GET /http/t1 from 198.18.0.2")}},
			rules: "non-enforcing@srt@local harness-bound@srt@local",
			want: []string{
				"non-enforcing: srt@local: fail-open in 1 of 90 trials (1 timed out after it): egress no verdict accounts for: denied http GET /http/t1 from 198.18.0.2 (1)",
				"harness-bound: srt@local: 9 of 90 trials (10.0%) were harness errors or timeouts (timeout x9)",
				"FAIL: 2 blocker(s) (1 fail-open)",
			},
		},
		{
			name:  "one timeout with egress among correct trials still fails",
			recs:  [][]model.Record{times(80, correct(seed)), {killed(model.NonEnforcing, "dns query denied.sandcheck.test from 198.18.0.2")}},
			rules: "non-enforcing@srt@local",
			want:  []string{"dns query denied.sandcheck.test from 198.18.0.2 (1)"},
		},
		{
			name:  "a trial-level non-enforcing outcome whose scenarios all passed",
			recs:  [][]model.Record{times(80, correct(seed)), {func() model.Record { r := correct(seed); r.Outcome = model.NonEnforcing; return r }()}},
			rules: "non-enforcing@srt@local",
		},
		{
			name: "a scenario the target cannot express needs no trials",
			recs: [][]model.Record{times(80, func() model.Record {
				r := correct(seed)
				r.Scenarios = append(r.Scenarios, model.Scenario{Name: "failclosed/bwrap-only", Outcome: model.NotApplicable, Pass: true})
				return r
			}())},
			want: []string{"PASS: 2 rows in 1 cells within policy"},
		},
		{
			name:  "a filesystem breach says what was written",
			recs:  [][]model.Record{times(80, correct(fsw)), times(3, failing(fsw, model.NonEnforcing, "", "write /root/outside-canary"))},
			rules: "non-enforcing@srt@local",
			want:  []string{"non-enforcing: srt@local: fail-open in 3 of 83 trials: filesystem/write-outside non-enforcing in 3: write /root/outside-canary (3)"},
			not:   []string{"host"},
		},
		{
			name:  "a known finding fails unless accepted",
			recs:  [][]model.Record{times(80, failing(seed, model.NonEnforcing, "srt:network/seed#udp", "udp: denied.sandcheck.test reached"))},
			rules: "non-enforcing@srt@local",
			want:  []string{"fail-open in 80 of 80 trials: network/seed non-enforcing in 80: udp: denied.sandcheck.test reached (80) (known finding srt:network/seed#udp, not accepted by the policy)"},
			not:   []string{"ACCEPTED"},
		},
		{
			name:   "an accepted known finding passes and is named",
			policy: "accept_known: [\"srt:network/seed#udp\"]\n",
			recs:   [][]model.Record{times(80, failing(seed, model.NonEnforcing, "srt:network/seed#udp", "udp: denied.sandcheck.test reached"))},
			want: []string{
				"ACCEPTED srt:network/seed#udp: srt@local network/seed: non-enforcing in 80 of 80 trials: udp: denied.sandcheck.test reached (80)",
				"PASS: 1 rows in 1 cells within policy; 1 known finding(s) accepted by policy",
			},
		},
		{
			name:   "accepting another id accepts nothing here",
			policy: "accept_known: [\"srt:network/seed#tcp\"]\n",
			recs:   [][]model.Record{times(80, failing(seed, model.NonEnforcing, "srt:network/seed#udp", "udp: denied.sandcheck.test reached"))},
			rules:  "non-enforcing@srt@local",
			want:   []string{"accept_known lists srt:network/seed#tcp, which no row showed"},
		},
		{
			name:   "an accepted finding does not cover a new breach in the same scenario",
			policy: "accept_known: [\"srt:network/seed#udp\"]\n",
			recs: [][]model.Record{times(79, failing(seed, model.NonEnforcing, "srt:network/seed#udp", "udp: denied.sandcheck.test reached")),
				{failing(seed, model.NonEnforcing, "", "http: denied.sandcheck.test reached")}},
			rules: "non-enforcing@srt@local",
			want:  []string{"non-enforcing: srt@local: fail-open in 1 of 80 trials: network/seed non-enforcing in 1", "ACCEPTED srt:network/seed#udp"},
		},
		{
			name:   "a failure needing two findings is accepted only with both",
			policy: "accept_known: [\"srt:network/channel/udp#udp:denied\"]\n",
			recs:   [][]model.Record{times(80, failing(seed, model.NonEnforcing, "srt:network/channel/udp#udp:denied, srt:network/channel/dns#dns:denied", "udp: denied.sandcheck.test reached", "dns: denied.sandcheck.test reached"))},
			rules:  "non-enforcing@srt@local",
			want:   []string{"(known finding srt:network/channel/dns#dns:denied, not accepted by the policy)", "accept_known lists srt:network/channel/udp#udp:denied, which no row showed"},
		},
		{
			name:   "both findings accepted",
			policy: "accept_known: [\"srt:network/channel/udp#udp:denied\", \"srt:network/channel/dns#dns:denied\"]\n",
			recs:   [][]model.Record{times(80, failing(seed, model.NonEnforcing, "srt:network/channel/udp#udp:denied, srt:network/channel/dns#dns:denied", "udp: denied.sandcheck.test reached", "dns: denied.sandcheck.test reached"))},
			want:   []string{"ACCEPTED srt:network/channel/dns#dns:denied, srt:network/channel/udp#udp:denied: srt@local network/seed: non-enforcing in 80 of 80 trials: dns: denied.sandcheck.test reached (80), udp: denied.sandcheck.test reached (80)", "2 known finding(s) accepted"},
		},
		{
			name:  "a known fail-closed finding counts in the bound unless accepted",
			recs:  [][]model.Record{times(80, failing("network/policy", model.AllowedBlocked, "srt:network/policy", ""))},
			rules: "fail-closed-bound@srt@local network/policy",
			want:  []string{"fail-closed rate 80/80 = 100.00%"},
		},
		{
			name:   "an accepted fail-closed finding leaves the bound to the rest",
			policy: "accept_known: [\"srt:network/policy\"]\n",
			recs:   [][]model.Record{times(80, failing("network/policy", model.AllowedBlocked, "srt:network/policy", ""))},
			want:   []string{"ACCEPTED srt:network/policy: srt@local network/policy: fail-closed in 80 of 80 trials"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := gateJournal(t, c.policy, c.recs...)
			if got := rules(res); got != c.rules {
				t.Fatalf("violations = %q, want %q\n%s", got, c.rules, out)
			}
			if res.Failed() != strings.HasPrefix(lastLine(out), "FAIL: ") || res.Failed() == strings.HasPrefix(lastLine(out), "PASS: ") {
				t.Fatalf("verdict line disagrees with the result:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("output holds %q:\n%s", n, out)
				}
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestGateOutputGrouped: blockers (fail-open first), fail-closed bounds, insufficient evidence
// (one line per cell), accepted findings, then one verdict line, whatever order rows come in.
func TestGateOutputGrouped(t *testing.T) {
	cell := func(host string) model.Cell { return model.Cell{ID: "srt|" + host, Target: "srt", Host: host} }
	on := func(host string, recs []model.Record) []model.Record {
		for i := range recs {
			recs[i].Cell = cell(host)
		}
		return recs
	}
	proxyDead := failing("network/seed", model.ProxyDead, "", "")
	_, out := gateJournal(t, "accept_known: [\"srt:filesystem/read-secret\"]\nrequired_scenarios: [concurrency/sessions]\n",
		// a: harness trouble and too few trials in two scenarios
		on("a", append(times(20, correct("network/seed", "filesystem/read-secret")), times(5, killed(model.HarnessError))...)),
		// b: fail-closed well over the bound, and an accepted known finding
		on("b", append(times(70, correct("network/seed")), times(10, proxyDead)...)),
		on("b", times(80, failing("filesystem/read-secret", model.NonEnforcing, "srt:filesystem/read-secret", "read /root/.ssh/id_ed25519"))),
		// c: a fail-open, listed first although its cell sorts last
		on("c", append(times(79, correct("filesystem/write-outside")), failing("filesystem/write-outside", model.NonEnforcing, "", "write /etc/sandcheck-canary"))),
	)
	want := `blockers (fail-open first): 3
  non-enforcing: srt@c: fail-open in 1 of 80 trials: filesystem/write-outside non-enforcing in 1: write /etc/sandcheck-canary (1)
  harness-bound: srt@a: 5 of 25 trials (20.0%) were harness errors or timeouts (harness-error x5), policy allows 5.0%: they measured nothing, so the rest cannot speak for the cell; e.g. trial 20: trial passed its 20s deadline
  required-scenario: required scenario "concurrency/sessions" was not measured in any cell
fail-closed bounds: 1
  fail-closed-bound: srt@b network/seed: fail-closed rate 10/80 = 12.50%, 95% upper bound 21.50% exceeds 5.00%: proxy-dead x10 (proxy-dead in network/seed)
insufficient evidence (measured trials held / needed, per cell): 1
  min-trials: srt@a: 20 measured trials held, 73 needed (2 scenario(s): filesystem/read-secret, network/seed)
accepted known findings (policy accept_known): 1
  ACCEPTED srt:filesystem/read-secret: srt@b filesystem/read-secret: non-enforcing in 80 of 80 trials: read /root/.ssh/id_ed25519 (80)
FAIL: 3 blocker(s) (1 fail-open), 1 fail-closed bound(s), 1 cell(s) with insufficient evidence; 1 known finding(s) accepted by policy; applicable in 5 of 5 cell x scenario rows (100%)
`
	if out != want {
		t.Fatalf("gate output:\n%s\nwant:\n%s", out, want)
	}
}

// TestRepoPolicy: gate.yaml parses, and every finding it accepts exists in knownfindings, so a
// renamed or removed finding cannot leave a stale acceptance behind.
func TestRepoPolicy(t *testing.T) {
	p, err := LoadPolicy("../../gate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range set {
		for _, f := range l.Findings {
			ids[f.ID] = true
		}
	}
	for _, id := range p.AcceptKnown {
		if !ids[id] {
			t.Errorf("gate.yaml accepts %q, which is no known finding", id)
		}
	}
	if *p.MinTrials != 73 || *p.MaxHarnessRate != 0.05 {
		t.Errorf("gate.yaml: min_trials %d, max_harness_rate %v", *p.MinTrials, *p.MaxHarnessRate)
	}
}
