package aggregate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// defaultTrial is a real trial of the default matrix (every scenario, srt 0.0.83 on this
// machine, its known findings failing): 52 verdicts, ~85 KB of evidence, the host fingerprint.
func defaultTrial(tb testing.TB) model.Record {
	tb.Helper()
	f, err := os.Open("testdata/default-matrix-trial.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	r := journal.NewReader(z, "default-matrix-trial.json")
	rec, err := r.Next()
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// nightlyJournal writes a journal of n trials of the default matrix as the runner leaves it:
// the first full, every other one compact (passing, or failing only by known findings). It
// returns the journal's path and size.
func nightlyJournal(tb testing.TB, dir string, n int) (string, int64) {
	tb.Helper()
	first := defaultTrial(tb)
	first.V = journal.SchemaVersion
	path := filepath.Join(dir, "journal.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	start := first.Start
	for i := range n {
		r := first
		r.Trial, r.Start = i, start.Add(time.Duration(i)*25*time.Second)
		if i > 0 {
			r = journal.Compacted(r)
		}
		if err := journal.Encode(w, r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	return path, st.Size()
}

// 10^4 passing trials of the default matrix: compact journal lines <= 4 KB, and a report.json
// under 2 MB, whose size does not follow the trials.
func TestNightlyReportSize(t *testing.T) {
	sizes := map[int]int{}
	for _, n := range []int{100, 10000} {
		path, jsize := nightlyJournal(t, t.TempDir(), n)
		if per := (jsize - int64(len(mustLine(t, path)))) / int64(n-1); per > 4096 {
			t.Fatalf("compact records average %d bytes, want <= 4096", per)
		}
		rep, _, err := FromJournals([]string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := schema.Encode(&buf, rep); err != nil {
			t.Fatal(err)
		}
		sizes[n] = buf.Len()
		if rep.Overall[0].Trials != n {
			t.Fatalf("%d trials counted, want %d", rep.Overall[0].Trials, n)
		}
	}
	t.Logf("report.json: %d bytes for 100 trials, %d for 10000", sizes[100], sizes[10000])
	if sizes[10000] > 2<<20 {
		t.Fatalf("report.json for 10^4 passing trials is %d bytes, want < 2 MiB", sizes[10000])
	}
	if sizes[10000] > sizes[100]+4096 {
		t.Fatalf("report.json grew from %d to %d bytes with 100x the passing trials", sizes[100], sizes[10000])
	}
}

func mustLine(t *testing.T, path string) []byte {
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	return sc.Bytes()
}

// BenchmarkNightlyReport reads a lean nightly journal of the default matrix into report.json:
// bytes per journaled trial, report size, and the peak heap, which must stay flat from 10^4 to
// 10^5 trials.
//
//	go test -run '^$' -bench NightlyReport -benchtime 1x ./reports/aggregate/
func BenchmarkNightlyReport(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			path, jsize := nightlyJournal(b, b.TempDir(), n)
			for b.Loop() {
				runtime.GC()
				stop := samplePeakHeap()
				start := time.Now()
				rep, _, err := FromJournals([]string{path}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := schema.Encode(&buf, rep); err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				peak := stop()
				b.ReportMetric(float64(jsize)/float64(n), "journal-B/trial")
				b.ReportMetric(float64(buf.Len())/1024, "report-KiB")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(n)/elapsed.Seconds(), "trials/s")
			}
		})
	}
}

// samplePeakHeap samples the live heap (runtime/metrics: no stop-the-world) every 2 ms until
// the returned func is called.
func samplePeakHeap() func() uint64 {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var max uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > max {
				max = v
			}
			select {
			case <-done:
				peak <- max
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}
