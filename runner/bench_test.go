//go:build linux

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
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
			cells := runtest.Cells(100)
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
		scen = append(scen, model.Scenario{Name: fmt.Sprintf("known/scenario-%d", i), Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Outcome: model.AllowedBlocked, What: "write /tmp/claude/x: ENOENT", Known: fmt.Sprintf("srt:known/scenario-%d#check", i)}}})
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
				sum, err := Run(context.Background(), fake, Options{Cells: runtest.Cells(10), Trials: n / 10, Parallel: 2, Dir: dir, FullJournal: full})
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
