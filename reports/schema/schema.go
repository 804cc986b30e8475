// Package schema is report.json: the one data model every report format, compare and the gate
// read. Aggregation produces a Report; formats render it; compare and gate decode it from disk.
// Keeping one model means the gate judges exactly what a human read in report.md. The schema is
// documented in ../SCHEMA.md; bump Version when a field changes meaning.
package schema

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// Version is report.json's schema_version. Readers refuse newer versions.
//
// v2: evidence is kept once per trial, in Report.Evidence, and examples point at it
// (Example.EvidenceRef); only examples of failures carry any. v1 reports, whose examples hold
// their evidence inline, are still read (ExampleEvidence serves both).
// v3: rows keep their trials' decisions against the known findings (Counts.Decisions) in place of
// verdict tallies made under one acceptance; a v2 report cannot be judged under another, so it
// is refused (regenerate it from its journals with `sandcheck report`).
const Version = 3

// MinVersion is the oldest schema_version a reader can judge.
const MinVersion = 3

// Report is the whole of report.json.
type Report struct {
	SchemaVersion    int                        `json:"schema_version"`
	GeneratedAt      time.Time                  `json:"generated_at"`
	SandcheckVersion string                     `json:"sandcheck_version"`
	RunIDs           []string                   `json:"run_ids"`
	Sources          []string                   `json:"sources,omitempty"` // journals read
	Hosts            map[string]json.RawMessage `json:"hosts"`             // host name -> fingerprint, as recorded
	Until            *Until                     `json:"until,omitempty"`   // the SPRT the runner stopped by, if any
	ClaimRate        float64                    `json:"claim_rate"`        // rate used for trials_needed
	Cells            []Cell                     `json:"cells"`             // one per cell x scenario
	Overall          []Overall                  `json:"overall"`           // one per cell: trial-level outcomes
	CoFailures       []CoFailure                `json:"co_failures,omitempty"`
	// Settings are the sandbox settings of the first trial that recorded them (the fixture's
	// policy merged with the user's own), for the report's Settings section.
	Settings json.RawMessage `json:"settings,omitempty"`
	// SettingsOf names the scenario whose own session ran with Settings, where the trial's
	// scenarios each ran with settings of their own (claude-settings); "" when the trial had one.
	SettingsOf string `json:"settings_of,omitempty"`
	// Evidence holds, once per trial, the evidence of the trials that examples of failures
	// point at (Example.EvidenceRef), so a report grows with its failures, not its trials.
	Evidence map[string]json.RawMessage `json:"evidence,omitempty"`
}

// ExampleEvidence is an example's evidence: inline (v1 reports) or by reference.
func (r *Report) ExampleEvidence(ex Example) json.RawMessage {
	if len(ex.Evidence) > 0 {
		return ex.Evidence
	}
	return r.Evidence[ex.EvidenceRef]
}

// EvidenceKey names a trial's evidence in Report.Evidence: run, cell and trial index.
func EvidenceKey(runID, cellID string, trial int) string {
	return fmt.Sprintf("%s/%s/%d", runID, cellID, trial)
}

// Until restates the adaptive stopping rule.
type Until struct {
	Hypotheses string  `json:"hypotheses"` // "rate<=0.01 vs rate>=0.05"
	Alpha      float64 `json:"alpha"`
	Beta       float64 `json:"beta"`
	Max        int     `json:"max,omitempty"`
}

// CellRef names a matrix cell.
type CellRef struct {
	CellID string `json:"cell_id"`
	Target string `json:"target"`
	// Version is the sandbox version the cell chose ("" = the adapter's pinned install).
	Version string `json:"version,omitempty"`
	Host    string `json:"host"`
	// User is who the sandbox ran as (unprivileged, root, an account's name); absent for
	// journals written before the user axis, when every trial ran as root.
	User   string `json:"user,omitempty"`
	Fault  string `json:"fault"` // "" = healthy sandbox
	Labels string `json:"labels,omitempty"`
}

// Name is how messages and reports name the cell: target/host, plus the version when chosen, the
// user when the journal records it, and the fault when injected.
func (c CellRef) Name() string {
	s := c.Target + "@" + c.Host
	if c.Version != "" {
		s = c.Target + " " + c.Version + "@" + c.Host
	}
	if c.User != "" {
		s += " user=" + c.User
	}
	if c.Fault != "" {
		s += " fault=" + c.Fault
	}
	if c.Labels != "" {
		s += " [" + c.Labels + "]"
	}
	return s
}

// HostKey is the key of a host's fingerprint in Report.Hosts: the host's name, followed by the
// user when it is not root, since the fingerprint says who the sandbox ran as.
func HostKey(host, user string) string {
	if user == "" || user == "root" {
		return host
	}
	return host + " user=" + user
}

// WithTarget extends a HostKey by the target's name: the key of a host's fingerprint in
// Report.Hosts when more than one target ran there as that user. The fingerprint names the
// sandbox, so each target keeps its own.
func WithTarget(hostKey, target string) string { return hostKey + " target=" + target }

// Fingerprint is the host fingerprint a target's trials recorded on host as user, and its key:
// the target's own where targets shared the host, else the host's.
func (r *Report) Fingerprint(host, user, target string) (string, json.RawMessage) {
	if k := WithTarget(HostKey(host, user), target); r.Hosts[k] != nil {
		return k, r.Hosts[k]
	}
	k := HostKey(host, user)
	return k, r.Hosts[k]
}

// Series is the cell without its version: the cells of one target at different versions,
// otherwise alike, share it (the version table's columns, compare --versions' pairs).
func (c CellRef) Series() CellRef {
	c.CellID, c.Version = "", ""
	return c
}

// Cell is one cell x scenario row.
type Cell struct {
	CellRef
	Scenario       string   `json:"scenario"`
	ScenarioLabels []string `json:"scenario_labels,omitempty"`
	// Aggregate: the scenario sums up the checks of others (model.Scenario.Aggregate); its
	// breaches are theirs, listed on their rows.
	Aggregate bool `json:"aggregate,omitempty"`
	Counts
}

// Name is the row's name in messages: cell name and scenario.
func (c Cell) Name() string { return c.CellRef.Name() + " " + c.Scenario }

// Key matches a row across reports: the stable cell ID plus the scenario.
func (c Cell) Key() string { return c.CellID + "\x00" + c.Scenario }

// Overall is one cell's trial-level result: a trial failed if any of its measured scenarios failed.
type Overall struct {
	CellRef
	Counts
	// Egress counts the trials whose fixture servers logged traffic the policy does not allow,
	// and EgressLines are the first few distinct such hits.
	Egress      int      `json:"egress,omitempty"`
	EgressLines []string `json:"egress_lines,omitempty"`
	// Network is the network policy the cell's target promises, as whoever wrote the report could
	// learn it from the target's adapter; nil when it could not (the adapter is not linked in, or
	// cannot be loaded where the report was written). The truth table's expectation.
	Network *NetworkPolicy `json:"network,omitempty"`
}

// NetworkPolicy is what a target promises of the network scenarios' two fixture hosts: the
// allowed host reachable over the channels in Reach (targets.Target.Reach), refused over the
// others; the denied host refused over every channel. An empty Reach is a deny-all sandbox.
type NetworkPolicy struct {
	Reach []string `json:"reach"`
}

// Counts is what both row kinds share.
type Counts struct {
	Trials          int                `json:"trials"`                     // every trial seen
	Measured        int                `json:"measured"`                   // trials that measured the sandbox (not harness-error, timeout, not-applicable)
	Outcomes        map[string]int     `json:"outcomes"`                   // outcome -> count, over all trials
	Failures        int                `json:"failures"`                   // measured trials that did not pass
	FailingOutcomes map[string]int     `json:"failing_outcomes,omitempty"` // outcome -> count, over failures only
	FailureRate     float64            `json:"failure_rate"`               // failures / measured
	CI95            [2]float64         `json:"ci95"`                       // Wilson 95% on failure_rate
	ClopperPearson  [2]float64         `json:"clopper_pearson"`            // exact 95% on failure_rate
	RuleOfThree     *float64           `json:"rule_of_three,omitempty"`    // 3/measured, only when failures == 0
	TrialsNeeded    *TrialsNeeded      `json:"trials_needed,omitempty"`    // only when failures == 0
	FailOpen        int                `json:"fail_open"`                  // failures observed as non-enforcing
	FailClosed      Rate               `json:"fail_closed"`                // the other failures: availability, not security
	SPRT            *SPRT              `json:"sprt,omitempty"`
	DurationMS      int64              `json:"duration_ms,omitempty"` // summed trial wall time (overall rows only)
	Examples        map[string]Example `json:"examples,omitempty"`    // outcome -> one trial
	// Decisions are the trials' failures against the known findings (decisions.go): what it
	// takes to let each through. Every judgement of the row, fail-open or not, reads them.
	Decisions []Decision `json:"decisions,omitempty"`
	// Harness counts the trials with harness trouble: a harness-error or timeout of the trial
	// or, for a cell's overall row, of one of its verdicts (model.Record.Harness).
	Harness int `json:"harness,omitempty"`
	// NotApplicable counts the trials in which the row could not be judged at all.
	NotApplicable int `json:"not_applicable,omitempty"`
	// Breaches says what was breached, in the breach's own terms ("write /home/u/x",
	// "http: denied.sandcheck.test reached"), with the failing trials that showed it: the most
	// frequent first, at most MaxBreaches; BreachesOther counts the observations left out.
	Breaches      []Breach `json:"breaches,omitempty"`
	BreachesOther int      `json:"breaches_other,omitempty"`
	// Unreproduced counts, per known-finding id keyed to this row, the trials it did not show in.
	Unreproduced map[string]int `json:"unreproduced,omitempty"`
	// Checks counts the failing trials per breach check and outcome (a network channel's
	// CHANNEL:ROLE, a bypass case's VIA:ROLE, a path): which host or way a row's failures were
	// about, which the words of Breaches say only in prose. At most MaxChecks, most trials first;
	// ChecksOther counts the observations left out, which tell a reader nothing.
	Checks      []CheckCount `json:"checks,omitempty"`
	ChecksOther int          `json:"checks_other,omitempty"`
}

// MaxChecks is how many distinct breach checks a row lists.
const MaxChecks = 16

// CheckCount is one breach check and outcome, with the failing trials whose verdict showed it.
type CheckCount struct {
	Check   string        `json:"check"`
	Outcome model.Outcome `json:"outcome"`
	Trials  int           `json:"trials"`
}

// CheckTrials counts the trials whose failing verdict showed check with outcome o.
func (c Counts) CheckTrials(check string, o model.Outcome) int {
	for _, k := range c.Checks {
		if k.Check == check && k.Outcome == o {
			return k.Trials
		}
	}
	return 0
}

// MaxBreaches is how many distinct breaches a row lists; the rest are counted, so a report's
// size follows its failures' variety, not the number of trials.
const MaxBreaches = 8

// Breach is one thing a sandbox let through, with the number of trials that showed it.
type Breach struct {
	What   string `json:"what"`
	Trials int    `json:"trials"`
}

// Fixed lists the known findings keyed to this row that showed in none of its trials: the id
// was reported unreproduced by every trial. Such a finding may have been fixed.
func (c Counts) Fixed() []string {
	known := map[string]bool{}
	for key := range c.Known() {
		for _, id := range model.SplitIDs(key) {
			known[id] = true
		}
	}
	var ids []string
	for id, n := range c.Unreproduced {
		if n > 0 && n == c.Trials && !known[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Breached says what a row's fail-open trials let through, in the breach's own terms: the
// recorded breaches, else the non-enforcing example's hint (journals from before breaches were
// recorded). Never a generic "host reached": a filesystem write is not a network breach.
func (c Counts) Breached() string {
	if s := c.BreachList(); s != "" {
		return s
	}
	if ex, ok := c.Examples["non-enforcing"]; ok && ex.Hint != "" {
		return ex.Hint
	}
	return "what was breached is not recorded (see the evidence)"
}

// BreachList is the breaches as one line: "write /x (3), read /y (1), and 4 more".
func (c Counts) BreachList() string {
	var parts []string
	for _, b := range c.Breaches {
		parts = append(parts, fmt.Sprintf("%s (%d)", b.What, b.Trials))
	}
	if c.BreachesOther > 0 {
		parts = append(parts, fmt.Sprintf("%d more", c.BreachesOther))
	}
	return strings.Join(parts, ", ")
}

// Rate is a count over Measured with its Wilson interval.
type Rate struct {
	Count int        `json:"count"`
	Rate  float64    `json:"rate"`
	CI95  [2]float64 `json:"ci95"`
}

// TrialsNeeded says how many clean trials claim "rate < Rate" at 95% and how many more to run.
type TrialsNeeded struct {
	Rate   float64 `json:"rate"`
	Trials int     `json:"trials"`
	More   int     `json:"more"`
}

// SPRT is the sequential test's verdict on the final counts.
type SPRT struct {
	Decision string  `json:"decision"` // accept-h0 (rate<=P0), accept-h1 (rate>=P1), continue, undecided
	LLR      float64 `json:"llr"`
	Trials   int     `json:"trials"`
}

// Example is one trial that produced an outcome, kept so a report can show why.
type Example struct {
	RunID string    `json:"run_id"`
	Trial int       `json:"trial"`
	Start time.Time `json:"start"`
	Pass  bool      `json:"pass"`
	// Known: the example failed, and known findings cover every failure it shows in this row.
	Known bool   `json:"known,omitempty"`
	Hint  string `json:"hint,omitempty"`
	Error string `json:"error,omitempty"`
	// EvidenceRef is the key of the trial's evidence in Report.Evidence, for an example of a
	// failure whose trial kept its evidence; "" otherwise (a passing example, or a trial the
	// journal kept compact: its evidence is that of the cell's first trial).
	EvidenceRef string `json:"evidence_ref,omitempty"`
	// Evidence is inline evidence, as schema v1 reports held it; v2 writes EvidenceRef instead.
	Evidence json.RawMessage `json:"evidence,omitempty"`
}

// CoFailure is, per cell, which scenarios failed in the same trials.
type CoFailure struct {
	CellRef
	Trials int        `json:"trials"`
	Groups []Group    `json:"groups,omitempty"` // scenarios that always failed together: one cause
	Pairs  []PairStat `json:"pairs,omitempty"`
}

// Group is a set of scenarios with identical failing trials.
type Group struct {
	Scenarios []string `json:"scenarios"`
	Failures  int      `json:"failures"`
}

// PairStat counts two scenarios failing together.
type PairStat struct {
	A        string `json:"a"`
	B        string `json:"b"`
	Together int    `json:"together"`
	AFails   int    `json:"a_fails"`
	BFails   int    `json:"b_fails"`
}

// Encode writes r as indented JSON (diff-friendly in CI artifacts).
func Encode(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode report.json: %w", err)
	}
	return nil
}

// Decode reads report.json, refusing a newer or missing schema_version: a gate that misreads a
// field it does not know could pass a release it should fail.
func Decode(r io.Reader, name string) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%s: decode report.json: %w", name, err)
	}
	switch {
	case rep.SchemaVersion > Version:
		return nil, fmt.Errorf("%s: report schema_version %d is newer than this sandcheck reads (%d)", name, rep.SchemaVersion, Version)
	case rep.SchemaVersion <= 0:
		return nil, fmt.Errorf("%s: not a sandcheck report.json (no schema_version)", name)
	case rep.SchemaVersion < MinVersion:
		return nil, fmt.Errorf("%s: report schema_version %d predates the decisions every judgement reads (v%d); regenerate it from its journals with `sandcheck report`", name, rep.SchemaVersion, MinVersion)
	}
	return &rep, nil
}

// OutcomeList formats outcome counts as "correct x90, proxy-dead x10" in the given order, then
// any unknown outcome names alphabetically.
func OutcomeList(m map[string]int, order []string) string {
	var parts []string
	done := map[string]bool{}
	for _, o := range order {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s x%d", o, m[o]))
		}
		done[o] = true
	}
	var rest []string
	for o, n := range m {
		if !done[o] && n > 0 {
			rest = append(rest, fmt.Sprintf("%s x%d", o, n))
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), ", ")
}

// ReadFile decodes the report.json at path.
func ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	return Decode(f, path)
}
