package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// Cell names one point of the matrix. ID is stable across runs (derived from the other fields), so
// baselines and resumes can match cells.
type Cell struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	// Version is the sandbox version the cell runs, as chosen (a matrix's versions:,
	// --target NAME@VERSION): "" is the adapter's pinned install. Part of ID when set.
	Version string `json:"version,omitempty"`
	Host    string `json:"host"`
	// User is who the sandbox ran as: unprivileged, root or an account's name; "" in journals
	// written before the user axis, when every trial ran as root.
	User   string `json:"user,omitempty"`
	Fault  string `json:"fault,omitempty"` // "" = healthy sandbox; else NAME[:k=v,...]
	Labels string `json:"labels,omitempty"`
}

// ScenarioDrivable is the one scenario a trial of a build its adapter cannot drive reports
// (not-applicable, with the reason); reports show such a version as a band rather than a row.
const ScenarioDrivable = "target/drivable"

// Scenario is the verdict of one spec within a trial: the one verdict type, made by the judge,
// decided against the known findings, framed by the trial, journaled and reported as it is.
type Scenario struct {
	Name    string   `json:"name"`             // stable spec name, e.g. "network/seed"
	Labels  []string `json:"labels,omitempty"` // Ginkgo labels of the spec
	Outcome Outcome  `json:"outcome"`
	Pass    bool     `json:"pass"`           // outcome was what the spec expects of a healthy sandbox
	Hint    string   `json:"hint,omitempty"` // one-line root cause
	// Info: the scenario informs and never fails (the limits class); its hint is its reading,
	// kept in every trial's record.
	Info bool `json:"info,omitempty"`
	// Breaches say what a failing scenario breached, each in its own terms and with the known
	// finding that covers it, if one does (see Failure).
	Breaches []Breach `json:"breaches,omitempty"`
	// Aggregate: the verdict sums up the checks of other scenarios (network/seed sums up the
	// channels); its breaches are keyed to those checks' scenarios.
	Aggregate bool `json:"aggregate,omitempty"`
	// Unreproduced lists the ids of known findings keyed to this scenario, for this target,
	// version and fault, that did not show although the scenario was judged: fixed?
	Unreproduced string `json:"unreproduced,omitempty"`
}

// Record is one finished trial.
type Record struct {
	V          int             `json:"v"`
	RunID      string          `json:"run_id"`
	Cell       Cell            `json:"cell"`
	Trial      int             `json:"trial"` // 0-based index within the cell
	Outcome    Outcome         `json:"outcome"`
	Hint       string          `json:"hint,omitempty"`
	Scenarios  []Scenario      `json:"scenarios,omitempty"`
	Evidence   json.RawMessage `json:"evidence,omitempty"` // the observation, as the spec attached it
	Start      time.Time       `json:"start"`
	DurationMS int64           `json:"duration_ms"`
	HostFP     json.RawMessage `json:"host_fp,omitempty"` // host fingerprint (doctor), first trial per cell
	Isolation  string          `json:"isolation,omitempty"`
	Error      string          `json:"error,omitempty"` // harness trouble, when the trial itself could not run
	// TimedOut: the trial passed its deadline and was killed. The outcome is timeout unless
	// the trial had already shown a fail-open (then non-enforcing, with TimedOut still set).
	TimedOut bool `json:"timed_out,omitempty"`
	// Egress lists, one line each, the hits on fixture servers by anything but the allowed
	// role that the trial streamed while it ran (e.g. "denied http GET /http/abc from
	// 198.18.0.2"). Not empty means fail-open, whatever the outcome says.
	Egress []string `json:"egress,omitempty"`
	// PhasesMS is where the trial's time went, per phase, as the trial process measured it
	// (start, fixture, sandbox, cleanup, classify, specs, report; see suites/harness/phases); the
	// rest of DurationMS is the runner's and the host's (process spawn, transport).
	PhasesMS map[string]int64 `json:"phases_ms,omitempty"`
	// Families is what each scenario family's specs cost in the trial: the sandbox starts they
	// made and their time (issue 32: a trial should cost its sandbox starts and little more).
	Families map[string]FamilyCost `json:"families,omitempty"`
	// Compact: the record was written without its evidence and host fingerprint, and without
	// the hints and labels of its scenarios (Compacted). The first trial of every cell and every
	// trial that failed in a way no known finding covers keep theirs (KeepsEvidence).
	Compact bool `json:"compact,omitempty"`
	// HostFPRef names the host fingerprint the trial ran under ("sha256:" and 16 hex digits of
	// the fingerprint's JSON), which the cell's first trial holds in full (FingerprintRef).
	HostFPRef string `json:"host_fp_ref,omitempty"`
}

// FamilyCost is what one family's specs cost within a trial.
type FamilyCost struct {
	MS        int64 `json:"ms"`         // wall time of its specs, set-up (BeforeAll) included
	Sessions  int   `json:"sessions"`   // sandboxed runs they started: each a start of the sandbox
	SessionMS int64 `json:"session_ms"` // those runs' time together (more than MS where they overlap)
}

// UnmarshalJSON reads a scenario verdict: an object, or (compact journal records) a string for a
// scenario that passed: "NAME" (outcome correct) or "NAME=OUTCOME". Verdicts of older journals,
// whose breaches were words and whose covering ids the verdict's own "known", are upgraded.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var name string
		if len(b) >= 2 && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
			name = string(b[1 : len(b)-1]) // no escapes: skip a second pass of the decoder
		} else if err := json.Unmarshal(b, &name); err != nil {
			return err
		}
		*s = Scenario{Name: name, Outcome: Correct, Pass: true}
		if n, o, ok := strings.Cut(name, "="); ok {
			s.Name, s.Outcome = n, Outcome(o)
		}
		return nil
	}
	type plain Scenario // no methods: no recursion
	var v struct {
		plain
		Known string `json:"known"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Scenario(v.plain)
	s.legacy(v.Known)
	return nil
}
