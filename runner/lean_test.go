package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// leanFake reports three scenarios, one of them a pinned known finding, with 20 KB of evidence;
// a fifth of its trials fail the first scenario outside any finding.
func leanFake() *Fake {
	return &Fake{Seed: 7, P: map[model.Outcome]float64{model.ProxyDead: 0.2},
		Scenarios: []model.Scenario{
			{Name: "network/seed", Outcome: model.Correct, Pass: true, Hint: "ok", Labels: []string{"network"}},
			{Name: "failclosed/socat-missing", Outcome: model.SandboxFailed, Pass: true},
			{Name: "untrusted/proxy-env-dead", Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Outcome: model.AllowedBlocked, What: "condition proxy-env-dead", Known: "srt:untrusted/proxy-env-dead#proxy-env-dead"}}},
		},
		Evidence: json.RawMessage(`{"blob":"` + strings.Repeat("e", 20<<10) + `"}`),
		HostFP:   json.RawMessage(`{"kernel":"6.1"}`)}
}

// The journal keeps evidence where it will be read (each cell's first trial, every failure no
// known finding covers) and is compact for the rest, which still count the same.
func TestLeanJournal(t *testing.T) {
	for _, full := range []bool{false, true} {
		dir := t.TempDir()
		fake := leanFake()
		cells := runtest.Cells(2)
		sum, err := Run(context.Background(), fake, Options{Cells: cells, Trials: 30, Parallel: 2, Dir: dir, FullJournal: full})
		if err != nil || sum.Ran != 60 {
			t.Fatalf("ran %d: %v", sum.Ran, err)
		}
		f, _ := os.Open(filepath.Join(dir, JournalFile))
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			lines++
			var raw struct {
				Trial     int             `json:"trial"`
				Compact   bool            `json:"compact"`
				Evidence  json.RawMessage `json:"evidence"`
				HostFPRef string          `json:"host_fp_ref"`
				Cell      model.Cell      `json:"cell"`
			}
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			unknown := fake.Outcome(raw.Cell.ID, raw.Trial) != model.Correct
			wantFull := full || raw.Trial == 0 || unknown
			if raw.Compact == wantFull || (len(raw.Evidence) > 0) != wantFull {
				t.Errorf("full=%v trial %d (unknown failure %v): compact %v, %d bytes of evidence", full, raw.Trial, unknown, raw.Compact, len(raw.Evidence))
			}
			if raw.Compact && len(sc.Bytes()) > 1024 {
				t.Errorf("compact record of 3 scenarios is %d bytes", len(sc.Bytes()))
			}
			if raw.Trial == 0 && raw.HostFPRef != journal.FingerprintRef(fake.HostFP) {
				t.Errorf("trial 0 fingerprint reference %q", raw.HostFPRef)
			}
		}
		f.Close()
		if lines != 60 {
			t.Fatalf("%d lines", lines)
		}
		// What a resume counts from the lean journal is what the run counted.
		again, err := Run(context.Background(), fake, Options{Cells: cells, Trials: 30, Dir: dir, Resume: true})
		if err != nil || again.Ran != 0 || again.Resumed != 60 {
			t.Fatalf("resume: ran %d resumed %d: %v", again.Ran, again.Resumed, err)
		}
		for i := range cells {
			a, b := sum.Cells[i].Counts, again.Cells[i].Counts
			if len(a) != len(b) || a[model.ProxyDead] != b[model.ProxyDead] || a[model.AllowedBlocked] != b[model.AllowedBlocked] {
				t.Fatalf("counts after resume %v, want %v", b, a)
			}
		}
	}
}

// A run that writes reproducers keeps the evidence of every failing trial, those failing only by
// known findings too (a reproducer is made from it), and is still compact for the passing ones.
func TestLeanJournalKeepsFailures(t *testing.T) {
	passing := leanFake()
	passing.Scenarios, passing.P = passing.Scenarios[:2], nil
	for _, c := range []struct {
		fake     *Fake
		wantFull int
	}{{leanFake(), 20}, {passing, 2}} {
		dir := t.TempDir()
		if _, err := Run(context.Background(), c.fake, Options{Cells: runtest.Cells(2), Trials: 10, Dir: dir, KeepFailures: true}); err != nil {
			t.Fatal(err)
		}
		full := 0
		_, err := journal.Scan(filepath.Join(dir, JournalFile), func(rec model.Record) error {
			if len(rec.Evidence) > 0 {
				full++
			}
			return nil
		})
		if err != nil || full != c.wantFull {
			t.Errorf("%d of 20 trials (%d scenarios each) kept their evidence, want %d (%v)", full, len(c.fake.Scenarios), c.wantFull, err)
		}
	}
}
