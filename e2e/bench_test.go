package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// benchN is the number of srt probes per measurement (SANDCHECK_BENCH_N, default 200).
func benchN() int {
	if n, err := strconv.Atoi(os.Getenv("SANDCHECK_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 200
}

func timed(b *testing.B, name string, args ...string) time.Duration {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	return time.Since(start)
}

// BenchmarkRunnerVsShellLoop: the runner's overhead over a plain shell loop running the same
// srt network probe N times (goal <= 1.05x), and its -j2 speedup on 2 cores (goal >= 1.8x).
func BenchmarkRunnerVsShellLoop(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for fixture namespaces")
	}
	n := benchN()
	for i := 0; i < b.N; i++ {
		loop := timed(b, "shell loop", "sh", "-c", fmt.Sprintf(
			`i=0; while [ $i -lt %d ]; do "%s" trial --emit --label-filter network >/dev/null || true; i=$((i+1)); done`, n, bin))
		j1 := timed(b, "run -j1", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "1", "--label-filter", "network", "--out", b.TempDir())
		j2 := timed(b, "run -j2", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "2", "--label-filter", "network", "--out", b.TempDir())
		b.ReportMetric(float64(loop.Milliseconds())/float64(n), "loop-ms/trial")
		b.ReportMetric(float64(j1.Milliseconds())/float64(n), "run-j1-ms/trial")
		b.ReportMetric(float64(j1)/float64(loop), "overhead-x")
		b.ReportMetric(float64(j1)/float64(j2), "j2-speedup-x")
	}
}
