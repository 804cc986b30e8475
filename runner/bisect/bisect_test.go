package bisect

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
)

// fake is a sandbox with known outcome distributions per version: from version index firstBad on
// the workspace scenario shows residue with probability badRate, before it with goodRate; the
// network scenario is always correct. Draws are seeded by (version, trial), so a resumed search
// sees the same world.
type fake struct {
	versions          []string
	firstBad          int
	goodRate, badRate float64
	trials            atomic.Int64
	byVersion         map[string]*atomic.Int64
}

func newFake(n, firstBad int, goodRate, badRate float64) *fake {
	f := &fake{firstBad: firstBad, goodRate: goodRate, badRate: badRate, byVersion: map[string]*atomic.Int64{}}
	for i := range n {
		v := fmt.Sprintf("0.0.%d", i+1)
		f.versions = append(f.versions, v)
		f.byVersion[v] = &atomic.Int64{}
	}
	return f
}

func (f *fake) index(v string) int {
	for i, x := range f.versions {
		if x == v {
			return i
		}
	}
	panic("unknown version " + v)
}

func (f *fake) Run(_ context.Context, t runner.Trial) model.Record {
	f.trials.Add(1)
	f.byVersion[t.Cell.Version].Add(1)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", t.Cell.Version, t.Index)
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	p := f.goodRate
	if f.index(t.Cell.Version) >= f.firstBad {
		p = f.badRate
	}
	ws := model.Correct
	if rng.Float64() < p {
		ws = model.Residue
	}
	return model.Record{Outcome: model.Worst(ws, model.Correct), Scenarios: []model.Scenario{
		{Name: "network/seed", Outcome: model.Correct, Pass: true},
		{Name: "filesystem/workspace/clean", Outcome: ws, Pass: ws == model.Correct},
	}}
}

func options(f *fake, dir string) Options {
	return Options{
		Versions: f.versions,
		Cell: func(v string) model.Cell {
			return model.Cell{ID: "srt-" + v, Target: "srt", Version: v, Host: "local", Labels: "filesystem"}
		},
		Exec: f, Dir: dir, Parallel: 2,
	}
}

func TestBisectFindsTheFirstBadVersionInFewTrials(t *testing.T) {
	for _, c := range []struct {
		name              string
		n, firstBad       int
		goodRate, badRate float64
	}{
		{"deterministic change", 61, 23, 0, 1},
		{"flaky before and after", 61, 40, 0.05, 0.8},
		{"change at the second version", 20, 1, 0, 1},
		{"change at the last version", 20, 19, 0.02, 0.95},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(c.n, c.firstBad, c.goodRate, c.badRate)
			res, err := Run(context.Background(), options(f, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if res.Undecided != "" || res.FirstBad != f.versions[c.firstBad] || res.LastGood != f.versions[c.firstBad-1] {
				t.Fatalf("first bad %s, last good %s (%s); want %s\n%+v", res.FirstBad, res.LastGood, res.Undecided, f.versions[c.firstBad], res.Steps)
			}
			if res.Event.Scenario != "filesystem/workspace/clean" || res.Event.Outcome != "residue" || res.Event.Not {
				t.Fatalf("event %+v", res.Event)
			}
			ran := int(f.trials.Load())
			if ran != res.Trials || ran >= res.SweepTrials || res.SweepTrials != c.n*DefaultEndpointTrials {
				t.Fatalf("trials: ran %d, reported %d, sweep %d", ran, res.Trials, res.SweepTrials)
			}
			visited := 0
			for _, v := range f.versions {
				if f.byVersion[v].Load() > 0 {
					visited++
				}
			}
			if maxSteps := 2 + bitsFor(c.n); visited > maxSteps || len(res.Steps) != visited {
				t.Fatalf("visited %d versions (steps %d), want at most %d", visited, len(res.Steps), maxSteps)
			}
			if res.Confidence < 1-float64(bitsFor(c.n))*DefaultAlpha || res.Confidence >= 1 {
				t.Fatalf("confidence %v", res.Confidence)
			}
			t.Logf("%s: %d trials over %d versions (a sweep at the endpoints' N: %d)", c.name, res.Trials, visited, res.SweepTrials)
		})
	}
}

func bitsFor(n int) int {
	b := 0
	for (1 << b) < n {
		b++
	}
	return b
}

func TestBisectResumesWithoutRepeatingTrials(t *testing.T) {
	dir := t.TempDir()
	f := newFake(40, 17, 0.03, 0.9)
	first, err := Run(context.Background(), options(f, dir))
	if err != nil {
		t.Fatal(err)
	}
	ran := f.trials.Load()
	// The same directory again without resume is refused: two searches never mix.
	if _, err := Run(context.Background(), options(f, dir)); err == nil {
		t.Fatal("a second bisect into a directory with trials was accepted without resume")
	}
	o := options(f, dir)
	o.Resume = true
	again, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if f.trials.Load() != ran {
		t.Fatalf("resume ran %d more trials", f.trials.Load()-ran)
	}
	if again.FirstBad != first.FirstBad || again.Trials != first.Trials || len(again.Steps) != len(first.Steps) {
		t.Fatalf("resumed search differs: %+v vs %+v", again, first)
	}
}

func TestBisectRefusesEndpointsThatDoNotDiffer(t *testing.T) {
	f := newFake(10, 99, 0.1, 0.1) // never changes
	res, err := Run(context.Background(), options(f, t.TempDir()))
	if !errors.Is(err, ErrNoDifference) || res == nil || res.Trials != 2*DefaultEndpointTrials {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestBisectStopsWhenAStepCannotDecide(t *testing.T) {
	// A midpoint whose rate lies halfway between the endpoints' (alternating, one trial at a
	// time) keeps the SPRT from deciding: the search stops there and says so.
	f := newFake(9, 5, 0, 1)
	half := &halfway{fake: f, at: f.versions[4]}
	o := options(f, t.TempDir())
	o.Exec, o.MaxPerStep, o.Parallel = half, 12, 1
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Undecided == "" || res.Steps[len(res.Steps)-1].Trials != 12 {
		t.Fatalf("want an undecided stop after 12 trials at %s: %+v", half.at, res)
	}
}

// halfway makes one version show the event in every other trial.
type halfway struct {
	*fake
	at string
}

func (h *halfway) Run(ctx context.Context, t runner.Trial) model.Record {
	rec := h.fake.Run(ctx, t)
	if t.Cell.Version == h.at {
		o := model.Correct
		if t.Index%2 == 1 {
			o = model.Residue
		}
		rec.Scenarios[1].Outcome, rec.Scenarios[1].Pass = o, o == model.Correct
	}
	return rec
}

// A midpoint whose trials measured nothing (harness errors: the adapter's stand-in model did not
// answer a request of that release; or a release the adapter cannot drive) is no evidence either
// way: never "like the good one". Seen bisecting Claude Code's resolved-address fix: 2.1.275 and
// 2.1.289 asked for an unscripted endpoint, were counted like 2.1.215, and the search named
// 2.1.290. Such a version is skipped, as git bisect skips a commit that cannot be tested: the
// search goes on with its nearest neighbour, and says which versions it could not judge.
func TestBisectNeverCountsHarnessErrorsAsEvidence(t *testing.T) {
	f := newFake(9, 6, 0, 1)
	res := bisectAround(t, f, 4)
	for _, s := range res.Steps {
		if s.Version == f.versions[4] && s.Verdict != "skipped" {
			t.Fatalf("%s gave only harness errors, judged %s: %+v", s.Version, s.Verdict, res)
		}
	}
	if res.Undecided != "" || res.FirstBad != f.versions[6] || res.LastGood != f.versions[5] {
		t.Fatalf("want the first bad version %s found around the skipped %s: %+v", f.versions[6], f.versions[4], res)
	}
	if len(res.Skipped) != 1 || res.Skipped[0] != f.versions[4] {
		t.Fatalf("skipped %v, want [%s]", res.Skipped, f.versions[4])
	}
}

// TestBisectNamesWhatItCouldNotJudge: when only versions the harness cannot judge are left
// between the last good and the first bad one, the search stops undecided and names them as
// candidates with the first bad one.
func TestBisectNamesWhatItCouldNotJudge(t *testing.T) {
	f := newFake(9, 5, 0, 1)
	res := bisectAround(t, f, 4)
	want := fmt.Sprintf("the first bad version is one of %s, %s", f.versions[4], f.versions[5])
	if res.Undecided == "" || !strings.Contains(res.Undecided, want) || res.LastGood != f.versions[3] {
		t.Fatalf("want an undecided stop naming %q after %s: %+v", want, f.versions[3], res)
	}
}

// bisectAround runs a search on f, one trial at a time, where version index broken gives only
// harness errors.
func bisectAround(t *testing.T, f *fake, broken int) *Result {
	t.Helper()
	o := options(f, t.TempDir())
	o.Exec, o.Parallel = &harnessErrors{fake: f, at: map[string]bool{f.versions[broken]: true}}, 1
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// harnessErrors makes some versions' trials harness errors.
type harnessErrors struct {
	*fake
	at map[string]bool
}

func (h *harnessErrors) Run(ctx context.Context, t runner.Trial) model.Record {
	rec := h.fake.Run(ctx, t)
	if h.at[t.Cell.Version] {
		rec.Outcome, rec.Hint = model.HarnessError, "scripted model: unexpected request HEAD /api/hello"
		for i := range rec.Scenarios {
			rec.Scenarios[i].Outcome, rec.Scenarios[i].Pass = model.HarnessError, false
		}
	}
	return rec
}
