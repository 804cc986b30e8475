package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

const (
	hooksID  = "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"
	tmpdirID = "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*"
	bypassID = "claude-code:claude-settings/permissions/bypass#bypass"
	dnsLine  = "denied dns A q-1.denied.sandcheck.test on denied.sandcheck.test:53 from 198.19.0.2:4000"
	httpLine = "denied http GET /x on denied.sandcheck.test:80 from 198.18.0.2:4242"
)

// The accepted filesystem findings of srt: non-enforcing and fail-closed, in every trial.
func srtKnown() []Scenario {
	return []Scenario{
		{Name: "filesystem/protected/git-hooks-new-repo", Outcome: NonEnforcing, Breaches: []Breach{
			{Scenario: "filesystem/protected/git-hooks-new-repo", Check: "$WORKSPACE/newrepo/.git/hooks/pre-commit", Outcome: NonEnforcing, What: "write hooks", Known: hooksID}}},
		{Name: "filesystem/workspace/tmpdir", Outcome: AllowedBlocked, Breaches: []Breach{
			{Outcome: AllowedBlocked, What: "write /tmp/claude refused", Known: tmpdirID}}},
		{Name: "network/seed", Outcome: Correct, Pass: true},
	}
}

func TestRecordDecisions(t *testing.T) {
	open := func(id string) Need { return Need{ID: id, FailOpen: true, Outcome: NonEnforcing} }
	closed := func(id string, o Outcome) Need { return Need{ID: id, Outcome: o} }
	const ne = NonEnforcing
	cases := []struct {
		name              string
		rec               Record
		failOpen, failure Requirement
	}{
		{"healthy", Record{Outcome: Correct, Scenarios: []Scenario{{Name: "network/seed", Outcome: Correct, Pass: true}}},
			Requirement{}, Requirement{}},
		{"srt's accepted findings", Record{Outcome: NonEnforcing, Scenarios: srtKnown()},
			Requirement{Needs: []Need{open(hooksID)}}, Requirement{Needs: []Need{open(hooksID), closed(tmpdirID, AllowedBlocked)}}},
		// The second audit's first hole: another row being non-enforcing must not hide egress
		// that no breach lists.
		{"an accepted fail-open finding beside egress no breach lists", Record{Outcome: NonEnforcing, Scenarios: srtKnown(), Egress: []string{dnsLine}},
			Requirement{Needs: []Need{open(hooksID)}, Uncovered: ne}, Requirement{Needs: []Need{open(hooksID), closed(tmpdirID, AllowedBlocked)}, Uncovered: ne}},
		{"egress a known breach lists", Record{Outcome: NonEnforcing, Egress: []string{httpLine}, Scenarios: []Scenario{
			{Name: "claude-settings/permissions/bypass", Outcome: NonEnforcing, Breaches: []Breach{{Outcome: NonEnforcing, What: "ran", Known: bypassID, Egress: []string{httpLine}}}}}},
			Requirement{Needs: []Need{open(bypassID)}}, Requirement{Needs: []Need{open(bypassID)}}},
		{"egress a new breach lists", Record{Outcome: NonEnforcing, Egress: []string{httpLine}, Scenarios: []Scenario{
			{Name: "network/channel/http", Outcome: NonEnforcing, Breaches: []Breach{{Outcome: NonEnforcing, What: "reached", Egress: []string{httpLine}}}}}},
			Requirement{Uncovered: ne}, Requirement{Uncovered: ne}},
		// A fail-closed breach cannot account for egress, whatever it lists.
		{"egress listed by a fail-closed breach", Record{Outcome: NonEnforcing, Egress: []string{httpLine}, Scenarios: []Scenario{
			{Name: "untrusted/proxy-env-dead", Outcome: AllowedBlocked, Breaches: []Breach{{Outcome: AllowedBlocked, What: "refused", Known: "srt:untrusted/proxy-env-dead#proxy-env-dead", Egress: []string{httpLine}}}}}},
			Requirement{Uncovered: ne}, Requirement{Needs: []Need{closed("srt:untrusted/proxy-env-dead#proxy-env-dead", AllowedBlocked)}, Uncovered: ne}},
		{"killed after egress, no verdict", Record{Outcome: NonEnforcing, TimedOut: true, Egress: []string{httpLine}},
			Requirement{Uncovered: ne}, Requirement{Uncovered: ne}},
		{"non-enforcing with nothing to show for it", Record{Outcome: NonEnforcing},
			Requirement{Uncovered: ne}, Requirement{Uncovered: ne}},
		{"a non-enforcing verdict no breach shows", Record{Outcome: NonEnforcing, Scenarios: []Scenario{
			{Name: "network/seed", Outcome: NonEnforcing, Breaches: []Breach{{Outcome: ProxyDead, What: "http: proxy dead", Known: "x"}}}}},
			Requirement{Uncovered: ne}, Requirement{Needs: []Need{closed("x", ProxyDead)}, Uncovered: ne}},
		{"a passing verdict lists no egress", Record{Outcome: NonEnforcing, Egress: []string{httpLine}, Scenarios: []Scenario{
			{Name: "failclosed/x", Outcome: SandboxFailed, Pass: true, Breaches: []Breach{{Outcome: NonEnforcing, Known: "y", Egress: []string{httpLine}}}}}},
			Requirement{Uncovered: ne}, Requirement{Uncovered: ne}},
		{"no spec passes a fail-open", Record{Outcome: NonEnforcing, Scenarios: []Scenario{{Name: "network/seed", Outcome: NonEnforcing, Pass: true}}},
			Requirement{Uncovered: ne}, Requirement{Uncovered: ne}},
		{"harness trouble is no failure", Record{Outcome: HarnessError, Scenarios: []Scenario{{Name: "network/seed", Outcome: HarnessError}}},
			Requirement{}, Requirement{}},
		{"the trial failed before any verdict", Record{Outcome: ProxyDead},
			Requirement{}, Requirement{Uncovered: ProxyDead}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.rec.FailOpen(); !reflect.DeepEqual(got, c.failOpen) {
				t.Errorf("FailOpen = %+v, want %+v", got, c.failOpen)
			}
			if got := c.rec.Failure(); !reflect.DeepEqual(got, c.failure) {
				t.Errorf("Failure = %+v, want %+v", got, c.failure)
			}
		})
	}
}

// Each tool's acceptance over the same requirement.
func TestAcceptance(t *testing.T) {
	q := Requirement{Needs: []Need{{ID: hooksID, FailOpen: true}, {ID: tmpdirID}}}
	for _, c := range []struct {
		name string
		a    Accept
		want bool
	}{
		{"nothing accepted", Accept{}, false},
		{"run: every known finding", Accept{Every: true}, true},
		{"preflight: fail-closed ones", Accept{FailClosed: true}, false},
		{"preflight --accept-known", Accept{FailClosed: true, Every: true}, true},
		{"gate: both ids", AcceptIDs(hooksID, tmpdirID), true},
		{"gate: the fail-closed id only", AcceptIDs(tmpdirID), false},
		{"gate: the fail-open id, fail-closed by kind", Accept{FailClosed: true, IDs: map[string]bool{hooksID: true}}, true},
	} {
		if got := q.MetBy(c.a); got != c.want {
			t.Errorf("%s: MetBy = %v, want %v", c.name, got, c.want)
		}
	}
	if (Requirement{Uncovered: NonEnforcing}).MetBy(Accept{Every: true}) {
		t.Error("an uncovered requirement was met")
	}
	if !(Requirement{}).MetBy(Accept{}) {
		t.Error("nothing failed, yet not met")
	}
}

// Verdicts of journals written before breaches were typed: each breach's words, and the
// verdict's covering ids, which every breach then needs together.
func TestLegacyVerdict(t *testing.T) {
	var s Scenario
	in := `{"name":"filesystem/isolation","outcome":"non-enforcing","pass":false,"breaches":["write a","read b"],"known":"id1, id2"}`
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	want := []Breach{{Outcome: NonEnforcing, What: "write a", Known: "id1, id2"}, {Outcome: NonEnforcing, What: "read b", Known: "id1, id2"}}
	if !reflect.DeepEqual(s.Breaches, want) {
		t.Fatalf("breaches %+v", s.Breaches)
	}
	if q := s.FailOpen(); q.Uncovered != "" || !reflect.DeepEqual(q.IDs(), []string{"id1", "id2"}) {
		t.Errorf("legacy verdict: %+v, want both ids", q)
	}
	var fresh Scenario
	if err := json.Unmarshal([]byte(`{"name":"x","outcome":"non-enforcing","pass":false,"breaches":["write a"]}`), &fresh); err != nil {
		t.Fatal(err)
	}
	if q := fresh.Failure(); q.Uncovered != NonEnforcing {
		t.Errorf("legacy verdict no finding covered: %+v", q)
	}
	var bare Scenario
	if err := json.Unmarshal([]byte(`{"name":"x","outcome":"proxy-dead","pass":false,"known":"id1"}`), &bare); err != nil {
		t.Fatal(err)
	}
	if q := bare.Failure(); q.Uncovered != "" || !reflect.DeepEqual(q.IDs(), []string{"id1"}) {
		t.Errorf("legacy verdict with ids and no words: %+v", q)
	}
}

func TestTrialOutcome(t *testing.T) {
	na := Scenario{Name: "filesystem/secret/read", Outcome: NotApplicable, Pass: true, Hint: "no deny-read"}
	if o, _ := TrialOutcome([]Scenario{na, na}); o != NotApplicable {
		t.Errorf("all not-applicable: %s", o)
	}
	if o, _ := TrialOutcome([]Scenario{na, {Name: "network/seed", Outcome: Correct, Pass: true}}); o != Correct {
		t.Errorf("one judged and passed: %s", o)
	}
	if o, _ := TrialOutcome(nil); o != HarnessError {
		t.Errorf("nothing ran: %s", o)
	}
	known := srtKnown()
	fresh := Scenario{Name: "network/channel/dns", Outcome: NonEnforcing, Hint: "new", Breaches: []Breach{{Outcome: NonEnforcing, What: "dns"}}}
	known[0].Hint = "known"
	if o, h := TrialOutcome(append(known, fresh)); o != NonEnforcing || h != "new" {
		t.Errorf("led by %s %q, want the new failure's hint", o, h)
	}
}
