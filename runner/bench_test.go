//go:build linux

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// BenchmarkJournal runs the in-process fake through the whole runner (scheduling, record
// encoding, append + fsync per trial) and measures memory. The goal is a peak heap well under
// 64 MiB that stays flat from 10000 to 100000 trials: nothing per trial may be kept.
//
//	go test -run '^$' -bench BenchmarkJournal -benchtime 1x ./runner/
func BenchmarkJournal(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			fake := &Fake{Seed: 1, P: map[model.Outcome]float64{model.ProxyDead: 0.1, model.NonEnforcing: 0.01}}
			cells := testCells(100)
			for b.Loop() {
				dir := b.TempDir()
				runtime.GC()
				resetPeakRSS()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := samplePeakHeap()
				start := time.Now()
				sum, err := Run(context.Background(), fake, Options{Cells: cells, Trials: n / len(cells), Parallel: 2, Dir: dir})
				elapsed := time.Since(start)
				peakHeap := stop()
				if err != nil || sum.Ran != n {
					b.Fatalf("ran %d: %v", sum.Ran, err)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), "B/trial")
				b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
				b.ReportMetric(float64(n)/elapsed.Seconds(), "trials/s")
			}
		})
	}
}

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
				sum, err := Run(context.Background(), pe, Options{Cells: testCells(1), Trials: 8, Parallel: j, Dir: b.TempDir()})
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

// BenchmarkOverhead compares the runner (-j1, ProcessExecutor, journal) with a plain shell loop
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
			pe := &ProcessExecutor{Command: func(Trial, string) ([]string, []string, string) {
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
				if _, err := Run(context.Background(), pe, Options{Cells: testCells(1), Trials: n, Dir: b.TempDir()}); err != nil {
					b.Fatal(err)
				}
				run += time.Since(start)
			}
			b.ReportMetric(float64(run)/float64(loop), "x-shell-loop")
			b.ReportMetric(float64(run-loop)/float64(b.N*n)/1e6, "overhead-ms/trial")
		})
	}
}

// samplePeakHeap polls the live heap every 2ms until stop is called and returns the maximum.
func samplePeakHeap() (stop func() uint64) {
	var max uint64
	var mu sync.Mutex
	quit := make(chan struct{})
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		v := sample[0].Value.Uint64()
		mu.Lock()
		if v > max {
			max = v
		}
		mu.Unlock()
	}
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		read()
		mu.Lock()
		defer mu.Unlock()
		return max
	}
}

// resetPeakRSS resets VmHWM (Linux: writing 5 to clear_refs), so peakRSS measures one run.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkLeanJournal runs trials shaped like the default matrix's (52 scenario verdicts, five
// of them pinned known findings, 80 KB of evidence each) through the whole runner, lean (the
// default) and --full-journal: journal bytes per trial, and the peak heap.
//
//	go test -run '^$' -bench BenchmarkLeanJournal -benchtime 1x ./runner/
func BenchmarkLeanJournal(b *testing.B) {
	var scen []model.Scenario
	for i := range 47 {
		scen = append(scen, model.Scenario{Name: fmt.Sprintf("filesystem/scenario-%02d", i), Outcome: model.Correct, Pass: true, Hint: "held"})
	}
	for i := range 5 {
		scen = append(scen, model.Scenario{Name: fmt.Sprintf("known/scenario-%d", i), Outcome: model.AllowedBlocked,
			Breaches: []string{"write /tmp/claude/x: ENOENT"}, Known: fmt.Sprintf("srt:known/scenario-%d#check", i)})
	}
	ev := json.RawMessage(`{"blob":"` + strings.Repeat("e", 80<<10) + `"}`)
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("full=%v", full), func(b *testing.B) {
			n := 10000
			if full {
				n = 1000 // 87 MB written and fsynced already says it
			}
			fake := &Fake{Seed: 1, P: map[model.Outcome]float64{model.ProxyDead: 0.001}, Scenarios: scen, Evidence: ev, HostFP: json.RawMessage(`{"kernel":"x"}`)}
			for b.Loop() {
				dir := b.TempDir()
				runtime.GC()
				stop := samplePeakHeap()
				sum, err := Run(context.Background(), fake, Options{Cells: testCells(10), Trials: n / 10, Parallel: 2, Dir: dir, FullJournal: full})
				peak := stop()
				if err != nil || sum.Ran != n {
					b.Fatalf("ran %d: %v", sum.Ran, err)
				}
				st, _ := os.Stat(filepath.Join(dir, JournalFile))
				b.ReportMetric(float64(st.Size())/float64(n), "journal-B/trial")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			}
		})
	}
}
