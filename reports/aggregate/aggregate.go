// Package aggregate folds journal records into the report model (schema.Report): per cell x
// scenario and per cell, outcome counts, failure rates with intervals, one example trial per
// outcome, and co-failure. It streams: memory grows with cells, scenarios and outcomes, never with
// the number of trials, so a 100000-trial nightly merge reports in constant space per cell.
package aggregate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/load"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/versions"
)

// Options tune a report. The zero value is usable.
type Options struct {
	SandcheckVersion string
	Now              time.Time // generated_at; zero means time.Now()
	Sources          []string  // journals read, for the record
	// Until, when set, is the matrix's SPRT (`rate<=0.01 vs rate>=0.05`); each row then says
	// which hypothesis its counts accept.
	Until       string
	Alpha, Beta float64 // SPRT error rates; 0 means 0.05
	Max         int     // SPRT trial budget, as in the matrix
	// ClaimRate is the rate that trials_needed speaks of ("N clean trials show rate < 1%").
	ClaimRate float64 // 0 means 0.01
	// MaxEvidenceBytes caps each trial's kept evidence; larger evidence is cut and marked.
	MaxEvidenceBytes int // 0 means 256 KiB
}

// Aggregator accumulates records. Not safe for concurrent use.
type Aggregator struct {
	opts     Options
	settings json.RawMessage // the first trial's sandbox settings, as its evidence recorded them
	// settingsOf names the scenario whose own session's settings those are (evidence keyed by
	// scenario); settingsFailed says that scenario failed, so no later trial's replace them.
	settingsOf     string
	settingsFailed bool
	sprt           *stats.SPRT
	until          *schema.Until
	cells          map[string]*cellAcc
	hosts          map[string]map[string]json.RawMessage // host key -> target -> the first fingerprint
	runIDs         map[string]bool
}

type cellAcc struct {
	ref     schema.CellRef
	overall acc
	scen    map[string]*scenAcc
	cof     *stats.CoFailure
	// egress and egressLines: trials whose fixture servers logged egress, and the first few
	// distinct lines.
	egress      int
	egressLines []string
}

type scenAcc struct {
	labels    []string
	aggregate bool
	acc
}

type acc struct {
	trials, measured, failures, failOpen int
	harness, notApplicable               int
	durationMS                           int64
	outcomes, failing                    map[string]int
	examples                             map[string]schema.Example
	breaches                             map[string]int
	breachOverflow                       int // observations of breaches beyond maxBreachKinds
	decisions                            map[string]*schema.Decision
	unreproduced                         map[string]int
	checks                               map[checkKey]int // failing trials per breach check and outcome
	checkOverflow                        int              // observations of checks beyond maxBreachKinds
}

// maxEgressLines bounds the egress lines a cell lists; the journal keeps them all.
const maxEgressLines = 3

// maxBreachKinds bounds the distinct breaches a row remembers: egress lines carry per-trial
// paths, and memory must not grow with trials.
const maxBreachKinds = 256

// breach counts each distinct what once per trial.
func (x *acc) breach(whats []string) {
	seen := map[string]bool{}
	for _, w := range whats {
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		if x.breaches == nil {
			x.breaches = map[string]int{}
		}
		if _, ok := x.breaches[w]; !ok && len(x.breaches) >= maxBreachKinds {
			x.breachOverflow++
			continue
		}
		x.breaches[w]++
	}
}

// decide tallies one trial's requirements (model.Scenario or model.Record Failure and FailOpen)
// and its outcome as the row counts it.
func (x *acc) decide(failure, failOpen model.Requirement, o model.Outcome, timedOut bool) {
	if !failure.Failed() && !failOpen.Failed() {
		return
	}
	if x.decisions == nil {
		x.decisions = map[string]*schema.Decision{}
	}
	d := schema.Decision{Failure: failure, FailOpen: failOpen, Outcome: o}
	key := d.Key()
	if _, ok := x.decisions[key]; !ok && len(x.decisions) >= schema.MaxDecisions {
		// Past the bound: one decision nothing lets through, so no acceptance can hide these.
		d = schema.Decision{Failure: model.Requirement{Uncovered: failure.Outside(model.Accept{})}, FailOpen: model.Requirement{Uncovered: failOpen.Outside(model.Accept{})}, Outcome: o}
		key = d.Key()
	}
	if x.decisions[key] == nil {
		x.decisions[key] = &d
	}
	x.decisions[key].Trials++
	if timedOut {
		x.decisions[key].TimedOut++
	}
}

func (x *acc) unreproducedIn(id string) {
	if x.unreproduced == nil {
		x.unreproduced = map[string]int{}
	}
	x.unreproduced[id]++
}

// New validates opts (the SPRT spelling in particular).
func New(opts Options) (*Aggregator, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Beta == 0 {
		opts.Beta = 0.05
	}
	if opts.ClaimRate == 0 {
		opts.ClaimRate = 0.01
	}
	if opts.MaxEvidenceBytes == 0 {
		opts.MaxEvidenceBytes = 256 << 10
	}
	if opts.ClaimRate <= 0 || opts.ClaimRate >= 1 {
		return nil, fmt.Errorf("aggregate: claim rate %v not in (0,1)", opts.ClaimRate)
	}
	a := &Aggregator{opts: opts, cells: map[string]*cellAcc{}, hosts: map[string]map[string]json.RawMessage{}, runIDs: map[string]bool{}}
	if opts.Until != "" {
		h, err := stats.ParseUntil(opts.Until)
		if err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
		s, err := stats.NewSPRT(h, opts.Alpha, opts.Beta, opts.Max)
		if err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
		a.sprt = s
		a.until = &schema.Until{Hypotheses: h.String(), Alpha: opts.Alpha, Beta: opts.Beta, Max: opts.Max}
	}
	return a, nil
}

// Add folds one trial in. Every count that judges comes from the trial's own decisions
// (model.Record and model.Scenario: Failure, FailOpen, Measured, Harness); the rest describes.
func (a *Aggregator) Add(r model.Record) {
	if r.RunID != "" {
		a.runIDs[r.RunID] = true
	}
	a.takeSettings(r)
	if hk := schema.HostKey(r.Cell.Host, r.Cell.User); len(r.HostFP) > 0 && a.hosts[hk][r.Cell.Target] == nil {
		if a.hosts[hk] == nil {
			a.hosts[hk] = map[string]json.RawMessage{}
		}
		a.hosts[hk][r.Cell.Target] = append(json.RawMessage(nil), r.HostFP...)
	}
	id := r.Cell.ID
	if id == "" {
		// Old or hand-made journals: derive a stand-in from the fields the ID is made of.
		id = fmt.Sprintf("%s|%s|%s|%s|%s", r.Cell.Target, r.Cell.Version, schema.HostKey(r.Cell.Host, r.Cell.User), r.Cell.Fault, r.Cell.Labels)
	}
	c := a.cells[id]
	if c == nil {
		c = &cellAcc{
			ref: schema.CellRef{CellID: id, Target: r.Cell.Target, Version: r.Cell.Version, Host: r.Cell.Host,
				User: r.Cell.User, Fault: r.Cell.Fault, Labels: r.Cell.Labels},
			scen: map[string]*scenAcc{},
			cof:  stats.NewCoFailure(),
		}
		a.cells[id] = c
	}

	every := model.Accept{Every: true}
	var failedNames []string
	trialUnrepro := map[string]bool{}
	for _, sc := range r.Scenarios {
		s := c.scen[sc.Name]
		if s == nil {
			s = &scenAcc{}
			c.scen[sc.Name] = s
		}
		if s.labels == nil && len(sc.Labels) > 0 { // compact records carry none
			s.labels = append([]string(nil), sc.Labels...)
		}
		s.aggregate = s.aggregate || sc.Aggregate
		failed := sc.Failed()
		hint := sc.Hint
		if hint == "" {
			hint = r.Hint
		}
		ex := a.example(r, id, !failed, hint)
		ex.Known = failed && sc.Covered(every)
		s.add(sc.Outcome, sc.Outcome.Measured(), failed, failed && sc.Outcome.Severity() == model.SevFailOpen, ex)
		s.decide(sc.Failure(), sc.FailOpen(), sc.Outcome, r.TimedOut)
		if sc.Outcome.Severity() == model.SevHarness {
			s.harness++
		}
		if sc.Outcome == model.NotApplicable {
			s.notApplicable++
		}
		for _, id := range model.SplitIDs(sc.Unreproduced) {
			s.unreproducedIn(id)
			trialUnrepro[id] = true
		}
		if failed {
			failedNames = append(failedNames, sc.Name)
			s.breach(model.Words(sc.Breaches))
			s.check(sc.Breaches)
		}
	}
	// The trial as a whole: failed if any verdict failed, or its fail-open evidence (egress a
	// verdict does not list, a non-enforcing outcome none explains) or its own outcome says so.
	failure, failOpen := r.Failure(), r.FailOpen()
	failed := failure.Failed()
	ex := a.example(r, id, !failed, r.Hint)
	ex.Known = failed && failure.MetBy(every)
	c.overall.add(r.Outcome, r.Measured(), failed, failOpen.Failed(), ex)
	c.overall.decide(failure, failOpen, r.Outcome, r.TimedOut)
	if r.Harness() {
		c.overall.harness++
	}
	if n, of := r.Applicable(); of > 0 && n == 0 || of == 0 && r.Outcome == model.NotApplicable {
		c.overall.notApplicable++
	}
	c.overall.breach(r.UnownedEgress()) // what no verdict's breach accounts for has no other row
	if len(r.Egress) > 0 {
		c.egress++
		for _, e := range r.Egress {
			if len(c.egressLines) < maxEgressLines && !slices.Contains(c.egressLines, e) {
				c.egressLines = append(c.egressLines, e)
			}
		}
	}
	for id := range trialUnrepro {
		c.overall.unreproducedIn(id)
	}
	c.overall.durationMS += r.DurationMS
	c.cof.Add(failedNames)
}

// example is a trial as an example of an outcome. Only failures keep evidence (a passing
// example says which trial; its evidence is in the journal), and only until Report.
func (a *Aggregator) example(r model.Record, id string, pass bool, hint string) schema.Example {
	ex := schema.Example{RunID: r.RunID, Trial: r.Trial, Start: r.Start, Pass: pass, Hint: hint, Error: r.Error}
	if !pass && len(r.Evidence) > 0 {
		ex.Evidence, ex.EvidenceRef = r.Evidence, schema.EvidenceKey(r.RunID, id, r.Trial)
	}
	return ex
}

func (x *acc) add(o model.Outcome, measured, failed, failOpen bool, ex schema.Example) {
	if x.outcomes == nil {
		x.outcomes, x.failing, x.examples = map[string]int{}, map[string]int{}, map[string]schema.Example{}
	}
	x.trials++
	x.outcomes[string(o)]++
	if measured {
		x.measured++
	}
	if failed {
		x.failures++
		x.failing[string(o)]++
		if failOpen {
			x.failOpen++
		}
	}
	// Keep the lowest (trial, run) per outcome: the same example whatever order shards arrive in.
	old, ok := x.examples[string(o)]
	if !ok || ex.Trial < old.Trial || (ex.Trial == old.Trial && ex.RunID < old.RunID) {
		x.examples[string(o)] = ex
	}
}

// Report builds the report model from what was added so far.
func (a *Aggregator) Report() *schema.Report {
	now := a.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	rep := &schema.Report{
		SchemaVersion:    schema.Version,
		GeneratedAt:      now.UTC(),
		SandcheckVersion: a.opts.SandcheckVersion,
		RunIDs:           sortedKeys(a.runIDs),
		Sources:          a.opts.Sources,
		Hosts:            a.fingerprints(),
		Until:            a.until,
		ClaimRate:        a.opts.ClaimRate,
		Cells:            []schema.Cell{},
		Overall:          []schema.Overall{},
		Evidence:         map[string]json.RawMessage{},
		Settings:         a.settings,
		SettingsOf:       a.settingsOf,
	}
	ids := make([]string, 0, len(a.cells))
	for id := range a.cells {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		x, y := a.cells[ids[i]].ref, a.cells[ids[j]].ref
		if x.Target != y.Target {
			return x.Target < y.Target
		}
		if c := versions.CompareStrings(x.Version, y.Version); x.Version != y.Version && c != 0 {
			return c < 0 // release order, not text order: 0.0.9 before 0.0.10
		}
		if x.Host != y.Host {
			return x.Host < y.Host
		}
		if x.User != y.User {
			return x.User < y.User
		}
		if x.Fault != y.Fault {
			return x.Fault < y.Fault
		}
		if x.Labels != y.Labels {
			return x.Labels < y.Labels
		}
		return x.CellID < y.CellID
	})
	for _, id := range ids {
		c := a.cells[id]
		rep.Overall = append(rep.Overall, schema.Overall{CellRef: c.ref, Counts: a.counts(rep, &c.overall), Egress: c.egress, EgressLines: slices.Clone(c.egressLines)})
		names := make([]string, 0, len(c.scen))
		for n := range c.scen {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s := c.scen[n]
			rep.Cells = append(rep.Cells, schema.Cell{CellRef: c.ref, Scenario: n, ScenarioLabels: s.labels, Aggregate: s.aggregate, Counts: a.counts(rep, &s.acc)})
		}
		if pairs := c.cof.Pairs(); len(pairs) > 0 {
			cf := schema.CoFailure{CellRef: c.ref, Trials: c.cof.Trials()}
			for _, g := range c.cof.Groups() {
				cf.Groups = append(cf.Groups, schema.Group{Scenarios: g.Scenarios, Failures: g.Failures})
			}
			for _, p := range pairs {
				cf.Pairs = append(cf.Pairs, schema.PairStat(p))
			}
			rep.CoFailures = append(rep.CoFailures, cf)
		}
	}
	if len(rep.Evidence) == 0 {
		rep.Evidence = nil
	}
	return rep
}

func (a *Aggregator) counts(rep *schema.Report, x *acc) schema.Counts {
	wil := stats.Wilson(x.failures, x.measured)
	cp := stats.ClopperPearson(x.failures, x.measured, 0.05)
	closed := x.failures - x.failOpen
	cw := stats.Wilson(closed, x.measured)
	c := schema.Counts{
		Trials:          x.trials,
		Measured:        x.measured,
		Outcomes:        x.outcomes,
		Failures:        x.failures,
		FailingOutcomes: x.failing,
		FailureRate:     stats.Rate(x.failures, x.measured),
		CI95:            [2]float64{wil.Low, wil.High},
		ClopperPearson:  [2]float64{cp.Low, cp.High},
		FailOpen:        x.failOpen,
		DurationMS:      x.durationMS,
		FailClosed:      schema.Rate{Count: closed, Rate: stats.Rate(closed, x.measured), CI95: [2]float64{cw.Low, cw.High}},
		Examples:        map[string]schema.Example{},
	}
	if c.Outcomes == nil {
		c.Outcomes = map[string]int{}
	}
	if len(c.FailingOutcomes) == 0 {
		c.FailingOutcomes = nil
	}
	if x.failures == 0 {
		r3 := stats.RuleOfThree(x.measured)
		c.RuleOfThree = &r3
		if n, err := stats.TrialsNeeded(a.opts.ClaimRate, 0.95); err == nil {
			c.TrialsNeeded = &schema.TrialsNeeded{Rate: a.opts.ClaimRate, Trials: n, More: max(0, n-x.measured)}
		}
	}
	c.Harness, c.NotApplicable = x.harness, x.notApplicable
	c.Breaches, c.BreachesOther = topBreaches(x.breaches, x.breachOverflow)
	c.Decisions = decisions(x.decisions)
	c.Checks, c.ChecksOther = topChecks(x.checks, x.checkOverflow)
	if len(x.unreproduced) > 0 {
		c.Unreproduced = maps.Clone(x.unreproduced)
	}
	if a.sprt != nil {
		c.SPRT = &schema.SPRT{Decision: a.sprt.Judge(x.failures, x.measured).String(), LLR: a.sprt.LLRFor(x.failures, x.measured), Trials: x.measured}
	}
	for o, ex := range x.examples {
		if ex.EvidenceRef != "" {
			if _, ok := rep.Evidence[ex.EvidenceRef]; !ok {
				rep.Evidence[ex.EvidenceRef] = capEvidence(ex.Evidence, a.opts.MaxEvidenceBytes)
			}
		}
		ex.Evidence = nil
		c.Examples[o] = ex
	}
	return c
}

// decisions lists a row's decisions in a stable order (by key), whatever order shards came in.
func decisions(m map[string]*schema.Decision) []schema.Decision {
	out := make([]schema.Decision, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, *m[k])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// topBreaches lists the most frequent breaches (then by name, so shard order does not matter)
// and counts the observations left out.
func topBreaches(m map[string]int, overflow int) ([]schema.Breach, int) {
	all := make([]schema.Breach, 0, len(m))
	for w, n := range m {
		all = append(all, schema.Breach{What: w, Trials: n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Trials != all[j].Trials {
			return all[i].Trials > all[j].Trials
		}
		return all[i].What < all[j].What
	})
	other := overflow
	if len(all) > schema.MaxBreaches {
		for _, b := range all[schema.MaxBreaches:] {
			other += b.Trials
		}
		all = all[:schema.MaxBreaches]
	}
	if len(all) == 0 {
		all = nil
	}
	return all, other
}

// capEvidence keeps reports readable and bounded when a probe dumped megabytes; the cut evidence
// stays valid JSON and says how much was dropped.
func capEvidence(ev json.RawMessage, limit int) json.RawMessage {
	if len(ev) <= limit {
		return ev
	}
	out, err := json.Marshal(struct {
		Truncated     bool   `json:"truncated"`
		OriginalBytes int    `json:"original_bytes"`
		Head          string `json:"head"`
	}{true, len(ev), string(ev[:limit])})
	if err != nil {
		return nil
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FromJournals reads and merges the journals at paths (files or folders of *.jsonl) into a
// report. The load.Result carries warnings (torn tails, duplicates) for the caller to print.
func FromJournals(paths []string, opts Options) (*schema.Report, load.Result, error) {
	if opts.Sources == nil {
		opts.Sources = paths
	}
	a, err := New(opts)
	if err != nil {
		return nil, load.Result{}, err
	}
	res, err := load.Journals(paths, func(r model.Record) error { a.Add(r); return nil })
	if err != nil {
		return nil, res, fmt.Errorf("report: %w", err)
	}
	return a.Report(), res, nil
}

// fingerprints keys each host's fingerprint by the host (and user), or by target as well where
// more than one target ran there: the fingerprint names the sandbox (schema.WithTarget).
func (a *Aggregator) fingerprints() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for hk, byTarget := range a.hosts {
		for target, fp := range byTarget {
			if len(byTarget) == 1 {
				out[hk] = fp
				continue
			}
			out[schema.WithTarget(hk, target)] = fp
		}
	}
	return out
}
