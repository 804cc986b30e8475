package e2e

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// The cost ledger: what each test's `sandcheck run`s cost, read from their journals (each trial's
// families: sandbox starts and their time), printed after the tests as the profile of the e2e
// tier (issue 32: where make test's time goes, and how much of it is sandboxes starting).
var ledger struct {
	sync.Mutex
	byTest map[string]*runCost
}

// runCost is what a test's runs cost: runs, trials, sandbox starts, the starts' time together
// (more than the wall time where sessions overlap: -j 2, the concurrency family) and wall time.
type runCost struct {
	runs, trials, starts int
	inSandbox, wall      time.Duration
}

// account adds one run's journal (in out) and wall time to t's top-level test, or to the shared
// run's own line (healthySRTRun) while that runs.
func account(t testing.TB, out string, wall time.Duration) {
	c := runCost{runs: 1, wall: wall}
	journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
		c.trials++
		for _, f := range r.Families {
			c.starts += f.Sessions
			c.inSandbox += time.Duration(f.SessionMS) * time.Millisecond
		}
		return nil
	})
	name, _, _ := strings.Cut(t.Name(), "/")
	if healthySRT.running {
		name = sharedRunName
	}
	ledger.Lock()
	defer ledger.Unlock()
	if ledger.byTest == nil {
		ledger.byTest = map[string]*runCost{}
	}
	s := ledger.byTest[name]
	if s == nil {
		s = &runCost{}
		ledger.byTest[name] = s
	}
	s.runs, s.trials, s.starts = s.runs+c.runs, s.trials+c.trials, s.starts+c.starts
	s.inSandbox, s.wall = s.inSandbox+c.inSandbox, s.wall+c.wall
}

// printLedger writes the ledger, costliest first, with the totals.
func printLedger(w io.Writer) {
	ledger.Lock()
	defer ledger.Unlock()
	if len(ledger.byTest) == 0 {
		return
	}
	names := make([]string, 0, len(ledger.byTest))
	var sum runCost
	for n, c := range ledger.byTest {
		names = append(names, n)
		sum.runs, sum.trials, sum.starts = sum.runs+c.runs, sum.trials+c.trials, sum.starts+c.starts
		sum.inSandbox, sum.wall = sum.inSandbox+c.inSandbox, sum.wall+c.wall
	}
	slices.SortFunc(names, func(a, b string) int { return int(ledger.byTest[b].wall - ledger.byTest[a].wall) })
	fmt.Fprintln(w, "e2e cost ledger (the tests' `sandcheck run`s; sandbox time overlaps at -j 2):")
	fmt.Fprintf(w, "  %-34s %5s %7s %7s %12s %9s\n", "test", "runs", "trials", "starts", "in sandbox", "wall")
	line := func(n string, c *runCost) {
		fmt.Fprintf(w, "  %-34s %5d %7d %7d %11.0fs %8.0fs\n", n, c.runs, c.trials, c.starts, c.inSandbox.Seconds(), c.wall.Seconds())
	}
	for _, n := range names {
		line(n, ledger.byTest[n])
	}
	line("total", &sum)
}
