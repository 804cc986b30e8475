package aggregate

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// channelVerdict is a network channel's verdict as the network family makes it: one breach,
// checked CHANNEL:ROLE, when it fails.
func channelVerdict(ch, role string, o model.Outcome, known string) model.Scenario {
	s := model.Scenario{Name: "network/channel/" + ch, Outcome: o, Pass: o == model.Correct}
	if o != model.Correct {
		s.Breaches = []model.Breach{{Scenario: s.Name, Check: ch + ":" + role, Outcome: o, What: ch + ": " + role, Known: known}}
	}
	return s
}

// TestChecksTally: a row counts its failing trials per breach check and outcome, so a reader can
// tell which host a channel's failures were about; a compact record's covered breach, which keeps
// its check only in its finding's id, counts under that check; passing verdicts count nothing.
func TestChecksTally(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "c1", Target: "srt", Host: "local"}
	add := func(trial int, s model.Scenario) {
		r := model.Record{RunID: "r", Cell: cell, Trial: trial, Outcome: s.Outcome, Scenarios: []model.Scenario{s}}
		if trial > 0 {
			r = journal.Compacted(r)
		}
		a.Add(r)
	}
	add(0, channelVerdict("http", "denied", model.NonEnforcing, ""))
	add(1, channelVerdict("http", "denied", model.NonEnforcing, ""))
	add(2, channelVerdict("http", "allowed", model.AllowedBlocked, "srt:network/channel/http#http:allowed"))
	add(3, channelVerdict("http", "", model.Correct, ""))
	add(4, channelVerdict("http", "proxy", model.ProxyDead, ""))
	got := find(t, a.Report(), "local", "network/channel/http")
	want := []schema.CheckCount{
		{Check: "http:denied", Outcome: model.NonEnforcing, Trials: 2},
		{Check: "http:allowed", Outcome: model.AllowedBlocked, Trials: 1},
		{Check: "http:proxy", Outcome: model.ProxyDead, Trials: 1},
	}
	if !reflect.DeepEqual(got.Checks, want) || got.ChecksOther != 0 {
		t.Fatalf("checks = %+v (other %d), want %+v", got.Checks, got.ChecksOther, want)
	}
	if n := got.CheckTrials("http:allowed", model.AllowedBlocked); n != 1 {
		t.Errorf("CheckTrials(http:allowed, allowed-blocked) = %d, want 1", n)
	}
}

// TestChecksBounded: a row lists at most schema.MaxChecks checks and counts the rest, and its
// memory stops growing at maxBreachKinds however many distinct checks trials show.
func TestChecksBounded(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "c1", Target: "srt", Host: "local"}
	n := maxBreachKinds + 10
	for i := range n {
		s := model.Scenario{Name: "filesystem/isolation", Outcome: model.NonEnforcing, Breaches: []model.Breach{
			{Check: fmt.Sprintf("/tmp/x%d", i), Outcome: model.NonEnforcing, What: fmt.Sprintf("write /tmp/x%d", i)}}}
		a.Add(model.Record{RunID: "r", Cell: cell, Trial: i, Outcome: model.NonEnforcing, Scenarios: []model.Scenario{s}})
	}
	if got := len(a.cells["c1"].scen["filesystem/isolation"].checks); got != maxBreachKinds {
		t.Errorf("kept %d distinct checks, want the bound %d", got, maxBreachKinds)
	}
	row := find(t, a.Report(), "local", "filesystem/isolation")
	if len(row.Checks) != schema.MaxChecks || row.ChecksOther != n-schema.MaxChecks {
		t.Errorf("listed %d checks, %d other; want %d and %d", len(row.Checks), row.ChecksOther, schema.MaxChecks, n-schema.MaxChecks)
	}
}
