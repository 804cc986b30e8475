//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
	"github.com/sandcheck/sandcheck/runner/rundir"
	"github.com/sandcheck/sandcheck/wire/journal"
)

func TestEveryTrialJournaledOnceWithFakeOutcomes(t *testing.T) {
	dir := t.TempDir()
	fake := &Fake{Seed: 7, P: map[model.Outcome]float64{model.ProxyDead: 0.25, model.NonEnforcing: 0.05}}
	cells := runtest.Cells(4)
	sum, err := Run(context.Background(), fake, Options{Cells: cells, Trials: 25, Parallel: 4, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := runtest.JournalKeys(t, filepath.Join(dir, JournalFile))
	if len(got) != 100 || sum.Ran != 100 || sum.Resumed != 0 {
		t.Fatalf("%d journaled, ran %d", len(got), sum.Ran)
	}
	for k, r := range got {
		if want := fake.Outcome(k.Cell, k.Trial); r.Outcome != want {
			t.Fatalf("%v: outcome %s, want %s", k, r.Outcome, want)
		}
		if r.RunID != sum.RunID || r.V != journal.SchemaVersion || r.Cell.Target != "fake" {
			t.Fatalf("record not filled in: %+v", r)
		}
	}
	total := 0
	for i, cs := range sum.Cells {
		if cs.Cell != cells[i] || cs.Trials != 25 {
			t.Fatalf("cell summary %d = %+v", i, cs)
		}
		for _, n := range cs.Counts {
			total += n
		}
	}
	if total != 100 {
		t.Fatalf("counts add up to %d", total)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.PgidFile)); !os.IsNotExist(err) {
		t.Fatalf("pgid file left behind: %v", err)
	}
}

func TestBoundedParallelism(t *testing.T) {
	for _, j := range []int{1, 3} {
		t.Run(fmt.Sprintf("j=%d", j), func(t *testing.T) {
			// The first j trials hold until all j run at once (the runner must start that many);
			// every trial records how many ran with it, which must never exceed j.
			var cur, peak, started atomic.Int32
			full := make(chan struct{})
			exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				if k := started.Add(1); int(k) == j {
					close(full)
				} else if int(k) < j {
					select {
					case <-full:
					case <-time.After(10 * time.Second):
						t.Errorf("the runner never ran %d trials at once", j)
					}
				}
				cur.Add(-1)
				return model.Record{Outcome: model.Correct}
			})
			dir := t.TempDir()
			if _, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(3), Trials: 8, Parallel: j, Dir: dir}); err != nil {
				t.Fatal(err)
			}
			if p := peak.Load(); int(p) != j {
				t.Fatalf("peak concurrency %d, want %d", p, j)
			}
			if got, _ := runtest.JournalKeys(t, filepath.Join(dir, JournalFile)); len(got) != 24 {
				t.Fatalf("%d journaled", len(got))
			}
		})
	}
}

func TestInterleavedOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		mu.Lock()
		order = append(order, fmt.Sprintf("%s/%d", tr.Cell.Fault, tr.Index))
		mu.Unlock()
		return model.Record{Outcome: model.Correct}
	})
	if _, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(2), Trials: 2, Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if want := "fault0/0 fault1/0 fault0/1 fault1/1"; strings.Join(order, " ") != want {
		t.Fatalf("order %v, want %s", order, want)
	}
}

func TestFakeRate(t *testing.T) {
	f := &Fake{Seed: 42, P: map[model.Outcome]float64{model.ProxyDead: 0.3, model.NonEnforcing: 0.01}}
	n := map[model.Outcome]int{}
	for i := range 20000 {
		n[f.Outcome("cell", i)]++
	}
	if r := float64(n[model.ProxyDead]) / 20000; math.Abs(r-0.3) > 0.015 {
		t.Fatalf("proxy-dead rate %.3f", r)
	}
	if r := float64(n[model.NonEnforcing]) / 20000; math.Abs(r-0.01) > 0.004 {
		t.Fatalf("non-enforcing rate %.4f", r)
	}
}

func TestExecutorIgnoringDeadlineIsAbandoned(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		<-release
		return model.Record{Outcome: model.Correct}
	})
	rec := runOne(context.Background(), exec, Trial{Timeout: 50 * time.Millisecond}, 50*time.Millisecond)
	if rec.Outcome != model.Timeout || !strings.Contains(rec.Error, "abandoned") {
		t.Fatalf("record %+v", rec)
	}
}

func TestInvalidOutcomeBecomesHarnessError(t *testing.T) {
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record { return model.Record{Outcome: "weird"} })
	rec := runOne(context.Background(), exec, Trial{Timeout: time.Second}, time.Second)
	if rec.Outcome != model.HarnessError || !strings.Contains(rec.Error, `executor returned outcome "weird"`) {
		t.Fatalf("record %+v", rec)
	}
}

// TestResumeAfterKill9 kills a runner process with SIGKILL mid-run, resumes, and checks that
// every finished trial is kept and none runs twice.
func TestResumeAfterKill9(t *testing.T) {
	skip.Short(t, "spawns a runner process")
	const n = 30
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SANDCHECK_TEST_RUNNER="+dir, "RUNNER_N=30")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(dir, "run", JournalFile)
	testwait.Until(t, "10 journaled trials", 20*time.Second, func() bool { return countLines(jpath) >= 10 })
	cmd.Process.Kill() // SIGKILL: no chance to clean up
	cmd.Wait()
	before, _ := runtest.JournalKeys(t, jpath)
	if len(before) < 10 || len(before) >= 2*n {
		t.Fatalf("%d trials before the kill (stderr %s)", len(before), stderr.String())
	}

	var mu sync.Mutex
	var rerun []runtest.Key
	fake := &Fake{Seed: 1, P: map[model.Outcome]float64{model.ProxyDead: 0.2}}
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		mu.Lock()
		rerun = append(rerun, runtest.Key{Cell: tr.Cell.ID, Trial: tr.Index})
		mu.Unlock()
		return fake.Run(ctx, tr)
	})
	sum, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(2), Trials: n, Parallel: 2, Dir: filepath.Join(dir, "run"), Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rerun {
		if _, ok := before[k]; ok {
			t.Fatalf("trial %v ran again after resume", k)
		}
	}
	after, _ := runtest.JournalKeys(t, jpath) // fails on duplicates
	if len(after) != 2*n || sum.Resumed != len(before) || sum.Ran != 2*n-len(before) {
		t.Fatalf("after resume %d trials (want %d), resumed %d, ran %d", len(after), 2*n, sum.Resumed, sum.Ran)
	}
	for k, r := range before {
		if after[k].Start != r.Start {
			t.Fatalf("trial %v changed", k)
		}
	}
	if after[runtest.Key{Cell: runtest.Cells(1)[0].ID, Trial: 0}].RunID != sum.RunID {
		t.Fatal("resume did not keep the run id")
	}
	t.Logf("killed after %d of %d trials; resume ran %d", len(before), 2*n, sum.Ran)
}

func TestTornLastLineIgnoredOnResume(t *testing.T) {
	dir := t.TempDir()
	cell := runtest.Cells(1)[0]
	jpath := filepath.Join(dir, JournalFile)
	w, _ := journal.OpenWriter(jpath)
	for i := range 3 {
		w.Append(model.Record{RunID: "old", Cell: cell, Trial: i, Outcome: model.Correct})
	}
	w.Close()
	f, _ := os.OpenFile(jpath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"run_id":"old","cell":{"id":"` + cell.ID + `"},"trial":3,"outc`)
	f.Close()

	sum, err := Run(context.Background(), &Fake{}, Options{Cells: []model.Cell{cell}, Trials: 5, Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "dropped a torn last line") {
		t.Fatalf("warnings %q", sum.Warnings)
	}
	got, warn := runtest.JournalKeys(t, jpath)
	if len(got) != 5 || len(warn) != 0 || sum.Resumed != 3 || sum.Ran != 2 || sum.RunID != "old" {
		t.Fatalf("%d trials, warn %v, resumed %d, ran %d, run id %s", len(got), warn, sum.Resumed, sum.Ran, sum.RunID)
	}
}

func TestShardUnionIsWhole(t *testing.T) {
	cells := runtest.Cells(7)
	fake := &Fake{Seed: 9, P: map[model.Outcome]float64{model.ProxyDead: 0.4}}
	whole := t.TempDir()
	if _, err := Run(context.Background(), fake, Options{Cells: cells, Trials: 3, Dir: whole, Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	want, _ := runtest.JournalKeys(t, filepath.Join(whole, JournalFile))
	union := map[runtest.Key]model.Record{}
	for i := 1; i <= 3; i++ {
		sh, _ := matrix.ParseShard(fmt.Sprintf("%d/3", i))
		dir := t.TempDir()
		if _, err := Run(context.Background(), fake, Options{Cells: cells, Shard: sh, Trials: 3, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		part, _ := runtest.JournalKeys(t, filepath.Join(dir, JournalFile))
		for k, r := range part {
			if _, dup := union[k]; dup {
				t.Fatalf("%v in two shards", k)
			}
			union[k] = r
		}
	}
	if len(union) != len(want) || len(want) != 21 {
		t.Fatalf("union %d, whole %d", len(union), len(want))
	}
	for k, r := range want {
		if u, ok := union[k]; !ok || u.Outcome != r.Outcome {
			t.Fatalf("%v: whole %s, shards %v", k, r.Outcome, u.Outcome)
		}
	}
}

type countStopper struct{ seen, after int }

func (s *countStopper) Observe(pass bool) bool { s.seen++; return s.seen >= s.after }

func TestStopperEndsCellEarly(t *testing.T) {
	// Even trials time out: they say nothing about the sandbox and must not be observed.
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		if tr.Index%2 == 0 {
			return model.Record{Outcome: model.Timeout}
		}
		return model.Record{Outcome: model.Correct}
	})
	dir := t.TempDir()
	var out bytes.Buffer
	sum, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(2), Trials: 100, Dir: dir, Progress: &out,
		NewStopper: func(model.Cell) Stopper { return &countStopper{after: 7} }})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range sum.Cells {
		if !cs.Stopped || cs.Trials != 14 || cs.Counts[model.Correct] != 7 {
			t.Fatalf("cell %+v", cs)
		}
	}
	if !strings.Contains(out.String(), "28/28 trials (100%)") {
		t.Fatalf("progress total not shrunk: %s", out.String())
	}
	// Resuming feeds the journal to fresh stoppers: nothing more runs.
	sum, err = Run(context.Background(), exec, Options{Cells: runtest.Cells(2), Trials: 100, Dir: dir, Resume: true,
		NewStopper: func(model.Cell) Stopper { return &countStopper{after: 7} }})
	if err != nil || sum.Ran != 0 || sum.Resumed != 28 {
		t.Fatalf("resume ran %d, resumed %d, err %v", sum.Ran, sum.Resumed, err)
	}
}

func TestPassed(t *testing.T) {
	sc := func(o model.Outcome, pass bool) model.Scenario { return model.Scenario{Outcome: o, Pass: pass} }
	cases := []struct {
		name          string
		rec           model.Record
		pass, counted bool
	}{
		{"correct", model.Record{Outcome: model.Correct}, true, true},
		{"proxy-dead", model.Record{Outcome: model.ProxyDead}, false, true},
		{"non-enforcing", model.Record{Outcome: model.NonEnforcing}, false, true},
		{"timeout", model.Record{Outcome: model.Timeout}, false, false},
		{"harness", model.Record{Outcome: model.HarnessError}, false, false},
		{"n/a", model.Record{Outcome: model.NotApplicable}, false, false},
		{"fail-closed scenario passes", model.Record{Outcome: model.SandboxFailed, Scenarios: []model.Scenario{sc(model.SandboxFailed, true)}}, true, true},
		{"one scenario fails", model.Record{Scenarios: []model.Scenario{sc(model.Correct, true), sc(model.ProxyDead, false)}}, false, true},
		{"harness scenarios ignored", model.Record{Scenarios: []model.Scenario{sc(model.Correct, true), sc(model.HarnessError, false)}}, true, true},
		{"only harness scenarios", model.Record{Scenarios: []model.Scenario{sc(model.Timeout, false)}}, false, false},
	}
	for _, c := range cases {
		if pass, counted := Passed(c.rec); pass != c.pass || counted != c.counted {
			t.Errorf("%s: Passed = %v, %v; want %v, %v", c.name, pass, counted, c.pass, c.counted)
		}
	}
}

func TestRunRefusals(t *testing.T) {
	cells := runtest.Cells(1)
	dir := t.TempDir()
	if _, err := Run(context.Background(), &Fake{}, Options{Cells: cells, Trials: 2, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"journal exists", Options{Cells: cells, Trials: 2, Dir: dir}, "already holds trials; resume it or use another directory"},
		{"no dir", Options{Cells: cells, Trials: 2}, "runner: no run directory"},
		{"no cells", Options{Trials: 2, Dir: dir}, "runner: no cells to run"},
		{"zero trials", Options{Cells: cells, Dir: dir}, "runner: trials per cell must be at least 1, got 0"},
		{"bad shard", Options{Cells: cells, Trials: 1, Dir: dir, Shard: matrix.Shard{I: 3, N: 2}}, "runner: bad shard 3/2"},
		{"duplicate cell", Options{Cells: append(cells, cells...), Trials: 1, Dir: t.TempDir()}, "listed twice"},
	}
	for _, c := range cases {
		if _, err := Run(context.Background(), &Fake{}, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestRunDirLocked(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		started <- struct{}{}
		<-release
		return model.Record{Outcome: model.Correct}
	})
	done := make(chan error)
	go func() {
		_, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(1), Trials: 1, Dir: dir})
		done <- err
	}()
	<-started
	_, err := Run(context.Background(), &Fake{}, Options{Cells: runtest.Cells(1), Trials: 1, Dir: dir, Resume: true})
	close(release)
	if err == nil || !strings.Contains(err.Error(), "in use by another sandcheck run") || !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("err = %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestPlainProgressLines(t *testing.T) {
	var out syncBuffer
	_, err := Run(context.Background(), &Fake{Seed: 1, Delay: 5 * time.Millisecond, P: map[model.Outcome]float64{model.ProxyDead: 0.5}},
		Options{Cells: runtest.Cells(2), Trials: 20, Parallel: 2, Dir: t.TempDir(), Progress: &out, ProgressEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("want periodic lines, got %q", lines)
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "sandcheck: 40/40 trials (100%), took ") || !strings.Contains(last, " correct=") || !strings.Contains(last, " proxy-dead=") {
		t.Fatalf("last line %q", last)
	}
	if strings.Contains(out.String(), "\r") {
		t.Fatal("carriage return in plain output")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFromMatrixAndTable(t *testing.T) {
	m, err := matrix.Parse("m.yaml", []byte("targets: [{name: fake}]\nfaults: [\"\", x]\ntrials: 3\nparallel: 2\ntimeout: 7s\n"), matrix.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	opt := FromMatrix(m)
	if len(opt.Cells) != 2 || opt.Trials != 3 || opt.Parallel != 2 || opt.Timeout != 7*time.Second {
		t.Fatalf("options %+v", opt)
	}
	opt.Dir = t.TempDir()
	sum, err := Run(context.Background(), &Fake{Seed: 2, P: map[model.Outcome]float64{model.ProxyDead: 0.5}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sum.WriteTable(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], opt.Cells[0].ID) || !strings.Contains(lines[1], "    3 trials") {
		t.Fatalf("table:\n%s", b.String())
	}
}

func TestStopperOvershootBoundedByParallelism(t *testing.T) {
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		time.Sleep(2 * time.Millisecond) // the fake trial's work, so trials overlap (not a wait)
		return model.Record{Outcome: model.Correct}
	})
	var mu sync.Mutex
	sum, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(3), Trials: 200, Parallel: 3, Dir: t.TempDir(),
		NewStopper: func(model.Cell) Stopper {
			return StopperFunc(func(bool) bool { mu.Lock(); defer mu.Unlock(); return false })
		}})
	if err != nil || sum.Ran != 600 {
		t.Fatalf("never-stopping rule: ran %d, %v", sum.Ran, err)
	}
	sum, err = Run(context.Background(), exec, Options{Cells: runtest.Cells(3), Trials: 200, Parallel: 3, Dir: t.TempDir(),
		NewStopper: func(model.Cell) Stopper { return &countStopper{after: 5} }})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range sum.Cells {
		// Trials already running when the rule decides still finish: at most Parallel-1 extra.
		if !cs.Stopped || cs.Trials < 5 || cs.Trials > 5+2 {
			t.Fatalf("cell %s: %d trials", cs.Cell.ID, cs.Trials)
		}
	}
}

// orderStopper records the trials it observes, in order, and never stops.
type orderStopper struct {
	mu    *sync.Mutex
	order *[]int
}

func (s orderStopper) Observe(bool) bool { return false }

func (s orderStopper) ObserveRecord(r model.Record) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.order = append(*s.order, r.Trial)
	return false
}

// A stopper sees the trials in journal order: a resume replays the journal into a fresh stopper,
// and an adaptive stop depends on the path, not only on the counts (a bisect resumed after a run
// at -j 2 ran two more trials when two workers' trials were journaled in one order and counted in
// the other).
func TestStopperSeesJournalOrder(t *testing.T) {
	var mu sync.Mutex
	var order []int
	exec := ExecutorFunc(func(ctx context.Context, tr Trial) model.Record {
		runtime.Gosched()
		return model.Record{Outcome: model.Correct}
	})
	dir := t.TempDir()
	if _, err := Run(context.Background(), exec, Options{Cells: runtest.Cells(1), Trials: 400, Parallel: 8, Dir: dir,
		NewStopper: func(model.Cell) Stopper { return orderStopper{&mu, &order} }}); err != nil {
		t.Fatal(err)
	}
	var journaled []int
	if _, err := journal.Scan(filepath.Join(dir, JournalFile), func(r model.Record) error { journaled = append(journaled, r.Trial); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, journaled) {
		t.Fatalf("the stopper saw trials in another order than the journal holds them:\n stopper %v\n journal %v", order, journaled)
	}
}
