package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// BenchmarkBypassPerTrial: the bypass label on healthy srt at -j2 (goal: under 10 s per trial).
// A trial runs every class once: one sandboxed session per class (two for matching and for
// policy-semantics), each with all its cases at once, plus the unsandboxed controls. Reports
// the median trial duration from the journal, the run's wall time per trial, and where a trial's
// time goes (median ms per phase). SANDCHECK_BENCH_N trials (default 10).
//
//	flock /tmp/sandcheck-heavy.lock go test ./e2e -run '^$' -bench BypassPerTrial -benchtime 1x
func BenchmarkBypassPerTrial(b *testing.B) {
	skip.UnlessRoot(b, "fixture namespaces")
	n := benchN(10)
	for i := 0; i < b.N; i++ {
		out := b.TempDir()
		wall := timed(b, "run -j2 bypass", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "2", "--label-filter", "bypass", "--out", out)
		phases := journalPhases(b, filepath.Join(out, "journal.jsonl"))
		trial := journalDurations(b, filepath.Join(out, "journal.jsonl"))
		perTrial := float64(wall.Milliseconds()) / float64(n)
		b.ReportMetric(median(trial), "trial-ms")
		b.ReportMetric(perTrial, "wall-ms/trial")
		var parts []string
		for _, k := range []string{"fixture", "sandbox", "classify", "cleanup", "runner"} {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, median(phases[k])))
		}
		b.Logf("bypass on healthy srt, -j2, %d trials: median trial %.1f s, wall %.1f s per trial (goal < 10 s); median ms: %v",
			n, median(trial)/1000, perTrial/1000, parts)
		if median(trial) > float64(10*time.Second/time.Millisecond) {
			b.Logf("over the 10 s goal")
		}
	}
}

// journalDurations reads each trial's duration (ms) from a journal.
func journalDurations(b *testing.B, path string) []float64 {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			DurationMS int64 `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.DurationMS > 0 {
			out = append(out, float64(r.DurationMS))
		}
	}
	return out
}
