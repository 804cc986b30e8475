// Package bisect finds, among a sandbox's published versions, the first one whose outcome
// distribution differs from an older good version's, on the scenarios a label filter selects.
//
// Outcomes are flaky, so no step trusts one trial. The good and the bad version are each run a
// fixed number of times first; the (scenario, outcome) event whose rate differs most between them
// (two-sided Fisher exact test) is what the search decides on. Each midpoint is then run until
// Wald's SPRT (reports/stats) decides between "the event's rate is the good version's" and "the
// bad version's" at error rates alpha and beta, or a trial budget runs out (undecided: the search
// stops and says so). With k steps the answer is wrong with probability at most k*max(alpha,
// beta), given one change between good and bad.
//
// Every trial goes through the runner into one journal (resumable: a resumed bisect replays the
// journal and reaches the same decisions without repeating a trial).
package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// Defaults.
const (
	DefaultEndpointTrials = 10
	DefaultAlpha          = 0.01
	DefaultBeta           = 0.01
	DefaultMaxPerStep     = 40
	// DefaultEps keeps the SPRT's hypotheses this far from 0 and 1.
	DefaultEps = 0.05
)

// Options configure a search. Versions, Cell, Exec and Dir are required.
type Options struct {
	// Versions are the candidates, oldest first: Versions[0] is the good version, the last
	// the bad one.
	Versions []string
	// Cell is the cell a version's trials run as (its ID must differ per version).
	Cell func(version string) model.Cell
	// Prepare readies a version before its first trial (installs it); nil = nothing to do.
	Prepare func(ctx context.Context, version string) error
	Exec    runner.Executor

	Dir      string // the bisect's directory: its journal
	Resume   bool   // continue the bisect in Dir (without it, a Dir with trials is refused)
	Parallel int
	Timeout  time.Duration // per trial

	EndpointTrials int     // trials at each endpoint; default DefaultEndpointTrials
	Alpha, Beta    float64 // per step; default DefaultAlpha, DefaultBeta
	MaxPerStep     int     // trials at one midpoint before it counts as undecided; default DefaultMaxPerStep
	Eps            float64 // default DefaultEps

	Progress io.Writer // one line per step; nil = silent
}

// Step is one version the search ran.
type Step struct {
	Version string  `json:"version"`
	Role    string  `json:"role"`    // good, bad (the endpoints) or midpoint
	Trials  int     `json:"trials"`  // trials of this version in the journal
	Events  int     `json:"events"`  // of them, trials showing the event
	Verdict string  `json:"verdict"` // looks-good, looks-bad or undecided (midpoints)
	LLR     float64 `json:"llr,omitempty"`
	// Example is what one trial's event scenario said: a trial showing the event at a
	// bad-looking version, one not showing it at a good-looking one ("sandbox-failed: ...").
	Example string `json:"example,omitempty"`
}

// Result is what a search found.
type Result struct {
	Good string `json:"good"`
	Bad  string `json:"bad"`
	// FirstBad is the first version whose outcome distribution is the bad one's; LastGood the
	// version before it. When Undecided is set they bound what is known so far.
	FirstBad string `json:"first_bad"`
	LastGood string `json:"last_good"`
	Event    Event  `json:"event"`
	Steps    []Step `json:"steps"`
	// Trials is every trial the answer rests on (journaled, resumed ones included).
	Trials int `json:"trials"`
	// Versions is how many versions lie from good to bad; SweepTrials what running every one of
	// them at the endpoints' trial count would take, the cost bisect avoids.
	Versions    int `json:"versions_in_range"`
	SweepTrials int `json:"sweep_trials"`
	// Alpha, Beta are each step's error rates; Confidence is 1 - (steps decided) * max(Alpha,
	// Beta): a lower bound on the probability the answer is right, given one change.
	Alpha      float64 `json:"alpha"`
	Beta       float64 `json:"beta"`
	Hypotheses string  `json:"hypotheses"`
	Confidence float64 `json:"confidence"`
	Undecided  string  `json:"undecided,omitempty"`
	// Skipped are the versions the search could not judge (no trial measured anything: a
	// release the adapter cannot drive, or only harness errors), which it went around.
	Skipped []string `json:"skipped,omitempty"`
	Journal string   `json:"journal"`
}

// ErrNoDifference says the endpoints do not differ significantly: nothing to bisect.
var ErrNoDifference = errors.New("the good and the bad version do not differ")

func (o *Options) defaults() error {
	switch {
	case len(o.Versions) < 2:
		return fmt.Errorf("bisect: need a good and a bad version, got %v", o.Versions)
	case o.Cell == nil || o.Exec == nil || o.Dir == "":
		return errors.New("bisect: Cell, Exec and Dir are required")
	}
	if o.EndpointTrials <= 0 {
		o.EndpointTrials = DefaultEndpointTrials
	}
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Beta <= 0 {
		o.Beta = DefaultBeta
	}
	if o.MaxPerStep <= 0 {
		o.MaxPerStep = DefaultMaxPerStep
	}
	if o.Eps <= 0 {
		o.Eps = DefaultEps
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	return nil
}

// Run searches. It returns ErrNoDifference (wrapped, with the endpoints' counts) when the
// endpoints do not differ at the endpoint test's level (alpha 0.05, two-sided).
func Run(ctx context.Context, opt Options) (*Result, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	s := &search{opt: opt, resume: opt.Resume}
	good, bad := opt.Versions[0], opt.Versions[len(opt.Versions)-1]
	res := &Result{Good: good, Bad: bad, Alpha: opt.Alpha, Beta: opt.Beta, Versions: len(opt.Versions),
		SweepTrials: len(opt.Versions) * opt.EndpointTrials, Journal: filepath.Join(opt.Dir, runner.JournalFile)}

	// The endpoints, together (their trials interleave, so drift of the machine hits both).
	recs, err := s.run(ctx, []string{good, bad}, opt.EndpointTrials, nil)
	if err != nil {
		return nil, err
	}
	gr, br := recs[good], recs[bad]
	ev, err := chooseEvent(gr, br)
	if err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	res.Event = ev
	res.Steps = append(res.Steps,
		Step{Version: good, Role: "good", Trials: len(gr), Events: ev.GoodK, Example: ev.example(gr, false)},
		Step{Version: bad, Role: "bad", Trials: len(br), Events: ev.BadK, Example: ev.example(br, true)})
	res.Trials = len(gr) + len(br)
	s.logf("endpoints: %s %s", good, stepLine(res.Steps[0]))
	s.logf("endpoints: %s %s", bad, stepLine(res.Steps[1]))
	if ev.P >= 0.05 {
		return res, fmt.Errorf("%w on these scenarios: the largest difference is %s, not significant at 0.05 (run more endpoint trials, or choose other versions)", ErrNoDifference, ev)
	}
	h, err := hypotheses(ev, opt.Eps)
	if err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	res.Hypotheses = fmt.Sprintf("%s: rate<=%.3g (good) vs rate>=%.3g (bad)", ev.label(), h.P0, h.P1)
	s.logf("deciding on %s; each step: SPRT %s, alpha %g, beta %g, at most %d trials", ev, h, opt.Alpha, opt.Beta, opt.MaxPerStep)

	lo, hi := 0, len(opt.Versions)-1
	decided := 0
	skipped := map[int]bool{}
	for hi-lo > 1 {
		mid, ok := untried(lo, hi, skipped)
		if !ok {
			var left []string
			for i := lo + 1; i <= hi; i++ {
				left = append(left, opt.Versions[i])
			}
			res.Undecided = fmt.Sprintf("only versions this harness cannot judge are left after %s: the first bad version is one of %s",
				opt.Versions[lo], strings.Join(left, ", "))
			break
		}
		v := opt.Versions[mid]
		sp, err := stats.NewSPRT(h, opt.Alpha, opt.Beta, opt.MaxPerStep)
		if err != nil {
			return res, fmt.Errorf("bisect: %w", err)
		}
		st := &sprtStopper{ev: ev, s: sp}
		recs, err := s.run(ctx, []string{v}, opt.MaxPerStep, func(model.Cell) runner.Stopper { return st })
		if err != nil {
			return res, err
		}
		step := Step{Version: v, Role: "midpoint", Trials: len(recs[v]), LLR: sp.LLR}
		for _, r := range recs[v] {
			if ev.Shows(r) {
				step.Events++
			}
		}
		res.Trials += step.Trials
		d, _ := sp.Decision()
		switch {
		case d == stats.AcceptH0:
			step.Verdict, lo = "looks-good", mid
			step.Example = ev.example(recs[v], false)
			decided++
		case d == stats.AcceptH1:
			step.Verdict, hi = "looks-bad", mid
			step.Example = ev.example(recs[v], true)
			decided++
		case st.measured == 0:
			// No evidence either way: go around it, as git bisect skips an untestable commit.
			step.Verdict = "skipped"
			step.Example = ev.example(recs[v], false) // what the trials said instead
			skipped[mid] = true
			res.Skipped = append(res.Skipped, v)
		default:
			step.Verdict = "undecided"
		}
		res.Steps = append(res.Steps, step)
		s.logf("step %d: %s %s -> %s (%d of %d versions left)", len(res.Steps)-2, v, stepLine(step), step.Verdict, hi-lo+1, len(opt.Versions))
		if step.Verdict == "skipped" {
			s.logf("%s gave no evidence in %d trials (%s): this harness cannot judge it; trying its neighbours", v, step.Trials, step.Example)
		}
		if step.Verdict == "undecided" {
			res.Undecided = fmt.Sprintf("%s undecided after %d trials (%d showed the event): its rate lies between the good and the bad one's, or changes more than once; the first bad version is in %s .. %s",
				v, step.Trials, step.Events, opt.Versions[lo+1], opt.Versions[hi])
			break
		}
	}
	res.LastGood, res.FirstBad = opt.Versions[lo], opt.Versions[hi]
	res.Confidence = 1 - float64(decided)*math.Max(opt.Alpha, opt.Beta)
	return res, nil
}

// untried is the index strictly between lo and hi nearest their midpoint that was not skipped.
func untried(lo, hi int, skipped map[int]bool) (int, bool) {
	mid := lo + (hi-lo)/2
	for d := 0; mid-d > lo || mid+d < hi; d++ {
		for _, i := range []int{mid + d, mid - d} {
			if i > lo && i < hi && !skipped[i] {
				return i, true
			}
		}
	}
	return 0, false
}

func (e Event) label() string {
	if e.Not {
		return e.Scenario + " not " + e.Outcome
	}
	return e.Scenario + " " + e.Outcome
}

// example describes the event scenario in the first record that shows the event (shows) or
// does not.
func (e Event) example(recs []model.Record, shows bool) string {
	for _, r := range recs {
		if e.Shows(r) != shows {
			continue
		}
		for _, sc := range r.Scenarios {
			if sc.Name == e.Scenario {
				if sc.Hint != "" {
					return fmt.Sprintf("%s: %s", sc.Outcome, sc.Hint)
				}
				return string(sc.Outcome)
			}
		}
		if r.Hint != "" {
			return fmt.Sprintf("%s: %s", r.Outcome, r.Hint)
		}
		return string(r.Outcome)
	}
	return ""
}

func stepLine(s Step) string {
	return fmt.Sprintf("%d trial(s), %d showed the event", s.Trials, s.Events)
}

// sprtStopper feeds the SPRT with "this trial shows the event".
type sprtStopper struct {
	ev Event
	s  *stats.SPRT
	// unmeasured counts the trials that were no evidence (Event.Measures); measured the others.
	unmeasured, measured int
}

// unmeasuredStop is how many trials without evidence, and none with, end a step undecided: the
// release cannot be judged by this harness (an agent asking what its stand-in does not answer).
const unmeasuredStop = 3

func (st *sprtStopper) Observe(bool) bool { return false } // ObserveRecord is used instead

func (st *sprtStopper) ObserveRecord(rec model.Record) bool {
	if !st.ev.Measures(rec) {
		st.unmeasured++
		return st.measured == 0 && st.unmeasured >= unmeasuredStop
	}
	st.measured++
	return st.s.Step(st.ev.Shows(rec)) != stats.Continue
}

// search runs versions through the runner, one journal for the whole bisect.
type search struct {
	opt     Options
	resume  bool // the journal may hold trials: always after the first run
	started bool
}

func (s *search) logf(format string, args ...any) {
	if s.opt.Progress != nil {
		fmt.Fprintf(s.opt.Progress, "bisect: "+format+"\n", args...)
	}
}

// run runs the versions' cells (n trials each, or until the stopper decides) and returns the
// journal's records of each, in journal order.
func (s *search) run(ctx context.Context, vs []string, n int, stop func(model.Cell) runner.Stopper) (map[string][]model.Record, error) {
	var cells []model.Cell
	byID := map[string]string{}
	for _, v := range vs {
		if s.opt.Prepare != nil {
			if err := s.opt.Prepare(ctx, v); err != nil {
				return nil, fmt.Errorf("bisect: prepare %s: %w", v, err)
			}
		}
		c := s.opt.Cell(v)
		cells = append(cells, c)
		byID[c.ID] = v
	}
	_, err := runner.Run(ctx, s.opt.Exec, runner.Options{
		Cells: cells, Trials: n, NewStopper: stop, Parallel: s.opt.Parallel, Timeout: s.opt.Timeout,
		Dir: s.opt.Dir, Resume: s.resume || s.started,
	})
	s.started = true
	if err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	out := map[string][]model.Record{}
	seen := map[string]map[int]bool{}
	_, err = journal.Scan(filepath.Join(s.opt.Dir, runner.JournalFile), func(r model.Record) error {
		v, ok := byID[r.Cell.ID]
		if !ok {
			return nil
		}
		if seen[v] == nil {
			seen[v] = map[int]bool{}
		}
		if !seen[v][r.Trial] {
			seen[v][r.Trial] = true
			out[v] = append(out[v], r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bisect: read journal: %w", err)
	}
	return out, nil
}
