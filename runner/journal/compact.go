package journal

// Compact records: a nightly of a hundred thousand trials is mostly passing trials, and what
// they add to a report is a count. They are journaled with their verdicts (outcome, breaches
// and known-finding ids per scenario), durations and a reference to the host fingerprint, in a
// few hundred bytes to a few KB, instead of tens of KB of evidence each. Evidence is kept in full
// wherever someone will read it: the first trial of every cell, and every trial that failed in
// a way no known finding covers, timed out, saw egress or hit harness trouble.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/sandcheck/sandcheck/suites/classify"
)

// KeepsEvidence says whether r must be journaled in full.
func KeepsEvidence(r Record) bool {
	if r.Trial == 0 || r.Error != "" || r.TimedOut || len(r.Egress) > 0 || len(r.Scenarios) == 0 {
		return true
	}
	switch r.Outcome {
	case classify.HarnessError, classify.Timeout:
		return true
	}
	for _, s := range r.Scenarios {
		if !s.Pass && s.Known == "" {
			return true // a failure no known finding explains, harness trouble in a spec included
		}
	}
	return false
}

// Compacted returns r as a compact record: no evidence, no host fingerprint (HostFPRef names
// it), no per-scenario hints or labels. The verdicts stay: outcome, pass, breaches, known and
// unreproduced ids per scenario.
func Compacted(r Record) Record {
	if r.HostFPRef == "" && len(r.HostFP) > 0 {
		r.HostFPRef = FingerprintRef(r.HostFP)
	}
	r.Compact, r.Evidence, r.HostFP = true, nil, nil
	sc := make([]Scenario, len(r.Scenarios))
	for i, s := range r.Scenarios {
		s.Hint, s.Labels = "", nil
		sc[i] = s
	}
	r.Scenarios = sc
	return r
}

// FingerprintRef is the short content reference of a host fingerprint.
func FingerprintRef(fp json.RawMessage) string {
	if len(fp) == 0 {
		return ""
	}
	sum := sha256.Sum256(fp)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// compactRecord is a compact Record as written: Scenarios shadows the Record's own, so that a
// scenario that passed with nothing more to say is a string: its name when its outcome was
// correct, else "NAME=OUTCOME" (a fail-closed scenario passes on sandbox-failed).
type compactRecord struct {
	Record
	Scenarios []any `json:"scenarios,omitempty"`
}

func (r Record) compactForm() compactRecord {
	c := compactRecord{Record: r, Scenarios: make([]any, len(r.Scenarios))}
	c.Record.Scenarios = nil
	for i, s := range r.Scenarios {
		switch {
		case !s.Pass || len(s.Breaches) > 0 || s.Known != "" || s.Unreproduced != "" || strings.Contains(s.Name, "="):
			c.Scenarios[i] = s
		case s.Outcome == classify.Correct:
			c.Scenarios[i] = s.Name
		default:
			c.Scenarios[i] = s.Name + "=" + string(s.Outcome)
		}
	}
	return c
}

// UnmarshalJSON reads a scenario verdict: an object, or (compact records) a string for a
// scenario that passed: "NAME" (outcome correct) or "NAME=OUTCOME".
func (s *Scenario) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var name string
		if len(b) >= 2 && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
			name = string(b[1 : len(b)-1]) // no escapes: skip a second pass of the decoder
		} else if err := json.Unmarshal(b, &name); err != nil {
			return err
		}
		*s = Scenario{Name: name, Outcome: classify.Correct, Pass: true}
		if n, o, ok := strings.Cut(name, "="); ok {
			s.Name, s.Outcome = n, classify.Outcome(o)
		}
		return nil
	}
	type plain Scenario // no methods: no recursion
	return json.Unmarshal(b, (*plain)(s))
}
