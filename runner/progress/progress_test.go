package progress

import (
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

func TestProgressLineAndBar(t *testing.T) {
	counts := map[model.Outcome]int{model.Correct: 4, model.ProxyDead: 1}
	if got, want := progressLine(5, 20, 5, 10*time.Second, counts, 0), "5/20 trials (25%), ETA 30s correct=4 proxy-dead=1"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	// Resumed trials took no time in this run: the ETA uses this run's pace only.
	if got, want := progressLine(12, 20, 2, 4*time.Second, nil, 0), "12/20 trials (60%), ETA 16s"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if got := progressLine(0, 20, 0, 0, nil, 0); got != "0/20 trials (0%), ETA ?" {
		t.Fatalf("got %q", got)
	}
	if got := bar(5, 20, 8); got != "[==      ]" {
		t.Fatalf("bar %q", got)
	}
}

// The meter counts a trial by what it amounts to outside the known findings: srt's healthy trial,
// non-enforcing by its known findings, is correct with known findings; egress no finding accounts
// for is non-enforcing.
func TestMeterCountsOutsideTheKnownFindings(t *testing.T) {
	known := model.Record{Outcome: model.NonEnforcing, Scenarios: []model.Scenario{
		{Name: "network/seed", Outcome: model.Correct, Pass: true},
		{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing,
			Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "write hooks", Known: "srt:hooks"}}}}}
	egress := known
	egress.Egress = []string{"denied dns A q.denied.sandcheck.test"}
	p := New(nil, true, time.Second, 0, 3, map[model.Outcome]int{}, 0)
	for _, r := range []model.Record{known, known, egress} {
		p.Finished(r, 0)
	}
	if got, want := progressLine(3, 3, 3, time.Second, p.counts, p.known), "3/3 trials (100%), took 1s correct=2 non-enforcing=1 (3 with known findings)"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}
