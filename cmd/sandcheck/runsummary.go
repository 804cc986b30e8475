package main

// What a finished run amounts to: its exit code and the summary `run` prints, both read from
// the journal (the trials this call ran and those it resumed).

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/journal"
)

// runResult is the journal of a run, tallied per cell.
type runResult struct {
	cells map[string]*cellResult // by cell ID
	order []string               // the summary's cells, in its order
}

// cellResult tallies one cell's trials.
type cellResult struct {
	trials   int
	hints    map[model.Outcome]string // one example per outcome: why
	scen     map[string]*scenTally
	egress   int      // trials with egress (hits on fixture servers the policy does not allow)
	egLines  []string // a few of those hits, for the summary
	failOpen int      // trials with a fail-open not covered by a known finding (egress included)
	harness  int      // trials with harness trouble (harness-error or timeout), fail-opens aside
	known    int      // failing scenario verdicts covered by a known finding
	unknown  int      // failing scenario verdicts not covered, plus failedRecords
	// failedRecords: trials that failed with no scenario verdict to say which (no result line,
	// or egress the scenarios do not account for).
	failedRecords int
}

// scenTally is one scenario across a cell's trials.
type scenTally struct {
	ran, failed, na int
	outs            map[model.Outcome]int
	known           map[string]int // known finding ids covering its failures, with counts
	unknown         int            // failures not covered
	breaches        []string       // distinct breaches of its failures, first seen first
	unrepro         map[string]int // known finding ids reported unreproduced, with counts
	hint            map[model.Outcome]string
}

func splitIDs(s string) []string {
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// harnessSev says an outcome is our side's trouble or nothing measured, not the sandbox's.
func harnessSev(o model.Outcome) bool {
	s := o.Severity()
	return s == model.SevHarness || s == model.SevSkip
}

// readRun tallies the journal of sum's cells.
func readRun(sum *runner.Summary) (*runResult, error) {
	res := &runResult{cells: map[string]*cellResult{}}
	for _, c := range sum.Cells {
		res.order = append(res.order, c.Cell.ID)
		res.cells[c.Cell.ID] = &cellResult{hints: map[model.Outcome]string{}, scen: map[string]*scenTally{}}
	}
	_, err := journal.Scan(sum.Journal, func(r model.Record) error {
		if c := res.cells[r.Cell.ID]; c != nil { // another shard's cells are not ours to judge
			c.add(r)
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("read journal %s: %w", sum.Journal, err)
	}
	return res, nil
}

func (c *cellResult) add(r model.Record) {
	c.trials++
	if _, ok := c.hints[r.Outcome]; !ok && r.Hint != "" {
		c.hints[r.Outcome] = firstClause(r.Hint)
	}
	failOpen, harness := len(r.Egress) > 0, r.Outcome.Severity() == model.SevHarness
	if len(r.Egress) > 0 {
		c.egress++
		for _, e := range r.Egress {
			if len(c.egLines) < 3 && !contains(c.egLines, e) {
				c.egLines = append(c.egLines, e)
			}
		}
	}
	explained, unknownHere := false, false // does a scenario verdict account for the record's outcome?
	for _, sc := range r.Scenarios {
		t := c.scen[sc.Name]
		if t == nil {
			t = &scenTally{outs: map[model.Outcome]int{}, known: map[string]int{}, unrepro: map[string]int{}, hint: map[model.Outcome]string{}}
			c.scen[sc.Name] = t
		}
		t.ran++
		for _, id := range splitIDs(sc.Unreproduced) {
			t.unrepro[id]++
		}
		if sc.Outcome == r.Outcome {
			explained = true
		}
		if sc.Outcome == model.NotApplicable {
			t.na++
		}
		if sc.Pass {
			continue
		}
		t.failed++
		t.outs[sc.Outcome]++
		if t.hint[sc.Outcome] == "" { // compact records carry no scenario hints: wait for one
			t.hint[sc.Outcome] = firstClause(sc.Hint)
		}
		for _, b := range sc.Breaches {
			if len(t.breaches) < 5 && !contains(t.breaches, b) {
				t.breaches = append(t.breaches, b)
			}
		}
		switch {
		case sc.Known != "":
			c.known++
			for _, id := range splitIDs(sc.Known) {
				t.known[id]++
			}
		case harnessSev(sc.Outcome):
			harness = harness || sc.Outcome.Severity() == model.SevHarness
		default:
			c.unknown++
			t.unknown++
			unknownHere = true
			failOpen = failOpen || sc.Outcome.Severity() == model.SevFailOpen
		}
	}
	// A record whose failure no scenario verdict accounts for (no result line at all, or a
	// result contradicted by egress) is a failure of its own.
	sev := r.Outcome.Severity()
	if (!explained && (sev == model.SevFailOpen || sev == model.SevFailClosed)) || (len(r.Egress) > 0 && !unknownHere) {
		c.failedRecords++
		c.unknown++
		failOpen = failOpen || sev == model.SevFailOpen
	}
	if failOpen {
		c.failOpen++
	}
	if harness && !failOpen {
		c.harness++
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runVerdict is the exit code of a run and why.
type runVerdict struct {
	code    int
	reasons []string
}

// verdict applies the exit codes (see runExitHelp): 1 over 3 over 0.
func (res *runResult) verdict(maxHarness float64) runVerdict {
	var fail, harness []string
	for _, id := range res.order {
		c := res.cells[id]
		if c.failOpen > 0 {
			fail = append(fail, fmt.Sprintf("%s: fail-open in %d of %d trials (non-enforcing outside the known findings, or egress)", id, c.failOpen, c.trials))
		}
		var names []string
		for _, name := range c.names() {
			if c.scen[name].unknown > 0 {
				names = append(names, name)
			}
		}
		switch {
		case len(names) > 0:
			fail = append(fail, fmt.Sprintf("%s: failed outside the known findings: %s", id, strings.Join(names, ", ")))
		case c.unknown > 0 && c.failOpen == 0:
			fail = append(fail, fmt.Sprintf("%s: %d trial(s) failed without a scenario verdict", id, c.failedRecords))
		}
		if c.trials > 0 && float64(c.harness) > maxHarness*float64(c.trials) {
			harness = append(harness, fmt.Sprintf("%s: harness errors or timeouts in %d of %d trials (%.0f%%), above --max-harness-rate %g", id, c.harness, c.trials, 100*stats.Rate(c.harness, c.trials), maxHarness))
		}
	}
	switch {
	case len(fail) > 0:
		return runVerdict{exitFail, fail}
	case len(harness) > 0:
		return runVerdict{exitHarness, harness}
	}
	return runVerdict{exitPass, nil}
}

// String names the verdict's exit code in words.
func (v runVerdict) String() string {
	switch v.code {
	case exitPass:
		return "exit 0 (every scenario passed)"
	case exitFail:
		return "exit 1 (fail-open or failure outside the known findings)"
	case exitHarness:
		return "exit 3 (harness errors or timeouts above the bound)"
	}
	return fmt.Sprintf("exit %d", v.code)
}

func printVerdict(w io.Writer, v runVerdict) {
	switch v.code {
	case exitPass:
		fmt.Fprintln(w, "exit 0: every scenario passed (known findings allowed)")
	default:
		for _, r := range v.reasons {
			fmt.Fprintf(w, "exit %d: %s\n", v.code, r)
		}
	}
}

// jsonSummary is the stable shape of `run --json`.
type jsonSummary struct {
	Trials      int                   `json:"trials"`
	Outcomes    map[model.Outcome]int `json:"outcomes"`
	Cells       []jsonCell            `json:"cells"`
	Journal     string                `json:"journal"`
	ExitCode    int                   `json:"exit_code"`
	ExitReasons []string              `json:"exit_reasons,omitempty"`
}

type jsonCell struct {
	ID       string                `json:"id"`
	Target   string                `json:"target"`
	Version  string                `json:"version,omitempty"` // a chosen version; "" = the pinned install
	Host     string                `json:"host"`
	User     string                `json:"user"` // who the sandbox ran as
	Fault    string                `json:"fault"`
	Trials   int                   `json:"trials"`
	Outcomes map[model.Outcome]int `json:"outcomes"`
	// FailureRate counts every trial whose outcome is not correct, harness trouble aside.
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	// Known counts failing scenario verdicts covered by a known finding; UnknownFailures those
	// not covered, plus trials that failed with no scenario verdict (no result, or egress).
	Known           int `json:"known"`
	UnknownFailures int `json:"unknown_failures"`
	FailOpen        int `json:"fail_open"` // trials with a fail-open outside the known findings
	Egress          int `json:"egress"`    // trials whose fixture servers saw traffic not allowed
	Harness         int `json:"harness"`   // trials with a harness error or timeout
}

func cellRate(c runner.CellSummary) (fails, counted int) {
	for o, k := range c.Counts {
		switch o.Severity() {
		case model.SevHarness, model.SevSkip:
			continue
		}
		counted += k
		if o != model.Correct {
			fails += k
		}
	}
	return fails, counted
}

func printJSON(w io.Writer, sum *runner.Summary, res *runResult, v runVerdict) {
	js := jsonSummary{Outcomes: map[model.Outcome]int{}, Cells: []jsonCell{}, Journal: sum.Journal,
		ExitCode: v.code, ExitReasons: v.reasons}
	for _, c := range sum.Cells {
		jc := jsonCell{ID: c.Cell.ID, Target: c.Cell.Target, Version: c.Cell.Version, Host: c.Cell.Host, User: users.Recorded(c.Cell.User), Fault: c.Cell.Fault,
			Trials: c.Trials, Outcomes: map[model.Outcome]int{}}
		for o, k := range c.Counts {
			jc.Outcomes[o] += k
			js.Outcomes[o] += k
		}
		js.Trials += c.Trials
		fails, counted := cellRate(c)
		ci := stats.Wilson(fails, counted)
		jc.FailureRate, jc.CI95 = stats.Rate(fails, counted), [2]float64{ci.Low, ci.High}
		if cr := res.cells[c.Cell.ID]; cr != nil {
			jc.Known, jc.UnknownFailures, jc.FailOpen, jc.Egress, jc.Harness = cr.known, cr.unknown, cr.failOpen, cr.egress, cr.harness
		}
		js.Cells = append(js.Cells, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(js)
}

// asUser names who a cell's sandbox ran as: "sandcheck (unprivileged)", "root", an account.
func asUser(spec string) string {
	switch u := users.Recorded(spec); u {
	case users.Unprivileged:
		return users.DedicatedName + " (unprivileged)"
	default:
		return u
	}
}

// printObserved prints the seed's "Observed" section: per cell, each outcome's count and rate,
// why (in the breach's own terms), and per scenario how often it failed.
func printObserved(w io.Writer, sum *runner.Summary, res *runResult) {
	for _, c := range sum.Cells {
		cr := res.cells[c.Cell.ID]
		if cr == nil {
			continue
		}
		fault := c.Cell.Fault
		if fault == "" {
			fault = "none (healthy)"
		}
		target := c.Cell.Target
		if c.Cell.Version != "" {
			target += "@" + c.Cell.Version
		}
		fmt.Fprintf(w, "\nObserved: %s on %s as %s, fault %s, %d trials\n", target, c.Cell.Host, asUser(c.Cell.User), fault, c.Trials)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  OUTCOME\tCOUNT\tRATE\t95% CI (Wilson)\tSEVERITY")
		var outs []model.Outcome
		for o := range c.Counts {
			outs = append(outs, o)
		}
		sort.Slice(outs, func(i, j int) bool { return indexOf(outs[i]) < indexOf(outs[j]) })
		for _, o := range outs {
			k := c.Counts[o]
			ci := stats.Wilson(k, c.Trials)
			fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t[%.1f%%, %.1f%%]\t%s\n", o, k, 100*stats.Rate(k, c.Trials), 100*ci.Low, 100*ci.High, o.Severity())
		}
		tw.Flush()
		for _, o := range outs {
			if o == model.Correct {
				continue
			}
			if h := cr.why(o); h != "" {
				fmt.Fprintf(w, "  why %s: %s\n", o, h)
			}
		}
		if cr.egress > 0 {
			fmt.Fprintf(w, "  egress in %d of %d trials (fail-open, whatever the outcome): %s\n", cr.egress, cr.trials, strings.Join(cr.egLines, "; "))
		}
		cr.printScenarios(w)
	}
}

// maxBreachLines bounds the breaches listed per scenario; the journal keeps them all.
const maxBreachLines = 3

// why explains an outcome of the cell: for a fail-open, a breach of a scenario that failed that
// way, in its own terms, else the trial's hint. Failures outside the known findings come first, then the most
// specific scenario (fewest breaches: an aggregate's first breach may be of another outcome).
func (c *cellResult) why(o model.Outcome) string {
	// Short of a fail-open, the trial's own hint names the root cause (which layer of the proxy
	// died, which condition degraded), which a breach such as "http: proxy dead" only restates.
	if o.Severity() != model.SevFailOpen && c.hints[o] != "" {
		return c.hints[o]
	}
	var cands []string
	for _, n := range c.names() {
		if t := c.scen[n]; t.outs[o] > 0 && (len(t.breaches) > 0 || t.hint[o] != "") {
			cands = append(cands, n)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := c.scen[cands[i]], c.scen[cands[j]]
		if (a.unknown > 0) != (b.unknown > 0) {
			return a.unknown > 0
		}
		return len(a.breaches) < len(b.breaches)
	})
	if len(cands) == 0 {
		return c.hints[o]
	}
	n := cands[0]
	t := c.scen[n]
	what := t.hint[o]
	if len(t.breaches) > 0 {
		what = t.breaches[0]
	}
	if t.unknown == 0 && len(t.known) > 0 {
		what += " (known finding)"
	}
	return n + ": " + what
}

func (c *cellResult) names() []string {
	var names []string
	for n := range c.scen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// printScenarios says how many applicable scenarios passed in every trial, lists the others with
// their breaches and known findings, and names known findings that never reproduced.
func (c *cellResult) printScenarios(w io.Writer) {
	names := c.names()
	var failed []string
	applicable, na := 0, 0
	for _, n := range names {
		t := c.scen[n]
		switch {
		case t.na == t.ran:
			na++
		case t.failed > 0:
			applicable++
			failed = append(failed, n)
		default:
			applicable++
		}
	}
	if len(names) >= 2 || len(failed) > 0 {
		line := fmt.Sprintf("  %d of %d applicable scenarios passed in every trial", applicable-len(failed), applicable)
		if na > 0 {
			line += fmt.Sprintf(", %d not applicable", na)
		}
		if len(failed) > 0 {
			line += "; the others:"
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range failed {
		t := c.scen[n]
		var parts []string
		for o, k := range t.outs {
			parts = append(parts, fmt.Sprintf("%s %d/%d", o, k, t.ran))
		}
		sort.Strings(parts)
		note := ""
		if len(t.known) > 0 {
			ids := sortedKeys(t.known)
			note = "  (known finding " + strings.Join(ids, ", ") + ")"
			if t.unknown > 0 {
				note = fmt.Sprintf("  (%d of %d failures outside the known findings %s)", t.unknown, t.failed, strings.Join(ids, ", "))
			}
		}
		fmt.Fprintf(w, "    %s: %s%s\n", n, strings.Join(parts, ", "), note)
		// An aggregate's breaches are those of the per-check scenarios listed beside it.
		if knownfindings.IsAggregate(n) {
			continue
		}
		for i, b := range t.breaches {
			if i == maxBreachLines {
				fmt.Fprintf(w, "      (+%d more)\n", len(t.breaches)-i)
				break
			}
			fmt.Fprintf(w, "      breached: %s\n", b)
		}
	}
	for _, n := range names {
		t := c.scen[n]
		for _, id := range sortedKeys(t.unrepro) {
			if k := t.unrepro[id]; k == t.ran {
				fmt.Fprintf(w, "  known finding %s did not reproduce in %d/%d trials (fixed?)\n", id, k, t.ran)
			}
		}
	}
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func indexOf(o model.Outcome) int {
	for i, x := range model.All {
		if x == o {
			return i
		}
	}
	return len(model.All)
}

// firstClause keeps a hint's leading cause, before the per-channel details.
func firstClause(h string) string {
	if i := strings.Index(h, "; "); i > 0 {
		return h[:i]
	}
	return h
}
