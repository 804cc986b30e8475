//go:build linux

package process

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
)

// BenchmarkParallel compares -j1 and -j2 wall time on 8 trials of a fake process target that
// either burns 200ms of CPU or sleeps 200ms. On 2 cores the goal is a speedup >= 1.8.
func BenchmarkParallel(b *testing.B) {
	for _, kind := range []string{"cpu", "sleep"} {
		b.Run(kind, func(b *testing.B) {
			env := "FAKE_SPIN_MS=200"
			if kind == "sleep" {
				env = "FAKE_SLEEP_MS=200"
			}
			pe := fakeProcess(env)
			wall := func(j int) time.Duration {
				start := time.Now()
				sum, err := runner.Run(context.Background(), pe, runner.Options{Cells: runtest.Cells(1), Trials: 8, Parallel: j, Dir: b.TempDir()})
				if err != nil || sum.Ran != 8 {
					b.Fatalf("ran %d: %v", sum.Ran, err)
				}
				return time.Since(start)
			}
			var j1, j2 time.Duration
			for b.Loop() {
				j1 += wall(1)
				j2 += wall(2)
			}
			b.ReportMetric(j1.Seconds()/float64(b.N), "j1-s")
			b.ReportMetric(j2.Seconds()/float64(b.N), "j2-s")
			b.ReportMetric(float64(j1)/float64(j2), "speedup")
		})
	}
}

// BenchmarkOverhead compares the runner (-j1, Executor, journal) with a plain shell loop
// running the same command N times. The goal from issue 4 is <= 1.05x on the real srt probe;
// sleeps of 50ms and 200ms stand in for it here, and `true` shows the fixed cost per trial
// (mostly the fsync of the journal line, about 1ms on this machine's disk when not batched).
func BenchmarkOverhead(b *testing.B) {
	for _, c := range []struct {
		name, cmd string
		n         int
	}{{"sleep200ms", "sleep 0.2", 40}, {"sleep50ms", "sleep 0.05", 100}, {"true", "true", 100}} {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			pe := &Executor{Command: func(runner.Trial, string) ([]string, []string, string) {
				return []string{"sh", "-c", c.cmd}, nil, ""
			}}
			var loop, run time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := exec.Command("sh", "-c", fmt.Sprintf(`for i in $(seq %d); do sh -c '%s'; done`, n, c.cmd)).CombinedOutput()
				if err != nil {
					b.Fatalf("loop: %v %s", err, out)
				}
				loop += time.Since(start)
				start = time.Now()
				if _, err := runner.Run(context.Background(), pe, runner.Options{Cells: runtest.Cells(1), Trials: n, Dir: b.TempDir()}); err != nil {
					b.Fatal(err)
				}
				run += time.Since(start)
			}
			b.ReportMetric(float64(run)/float64(loop), "x-shell-loop")
			b.ReportMetric(float64(run-loop)/float64(b.N*n)/1e6, "overhead-ms/trial")
		})
	}
}
