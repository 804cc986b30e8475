package journal

// Compact records: a nightly of a hundred thousand trials is mostly passing trials, and what
// they add to a report is a count. They are journaled with their verdicts (outcome, breaches
// and known-finding ids per scenario), durations and a reference to the host fingerprint, in a
// few hundred bytes to a few KB, instead of tens of KB of evidence each. Evidence is kept in full
// wherever someone will read it: the first trial of every cell, and every trial that failed in
// a way no known finding covers, timed out, saw egress or hit harness trouble.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// KeepsEvidence says whether r must be journaled in full.
func KeepsEvidence(r model.Record) bool {
	if r.Trial == 0 || r.Error != "" || r.TimedOut || len(r.Egress) > 0 || len(r.Scenarios) == 0 || r.Harness() {
		return true
	}
	// A failure no known finding covers, fail-open or not.
	return !r.Failure().MetBy(model.Accept{Every: true})
}

// Compacted returns r as a compact record: no evidence, no host fingerprint (HostFPRef names
// it), no per-scenario hints (but an information scenario's reading) or labels. The verdicts stay: outcome, pass, breaches, known and
// unreproduced ids per scenario.
func Compacted(r model.Record) model.Record {
	if r.HostFPRef == "" && len(r.HostFP) > 0 {
		r.HostFPRef = FingerprintRef(r.HostFP)
	}
	r.Compact, r.Evidence, r.HostFP = true, nil, nil
	sc := make([]model.Scenario, len(r.Scenarios))
	for i, s := range r.Scenarios {
		if !s.Info { // an information scenario's hint is its reading
			s.Hint = ""
		}
		s.Labels = nil
		if len(s.Breaches) > 0 {
			// A covered breach's scenario and check are in its finding's id.
			bs := make([]model.Breach, len(s.Breaches))
			for j, b := range s.Breaches {
				if b.Known != "" {
					b.Scenario, b.Check = "", ""
				}
				bs[j] = b
			}
			s.Breaches = bs
		}
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
	model.Record
	Scenarios []any `json:"scenarios,omitempty"`
}

func compactForm(r model.Record) compactRecord {
	c := compactRecord{Record: r, Scenarios: make([]any, len(r.Scenarios))}
	c.Record.Scenarios = nil
	for i, s := range r.Scenarios {
		switch {
		case !s.Pass || len(s.Breaches) > 0 || s.Aggregate || s.Unreproduced != "" || s.Info || strings.Contains(s.Name, "="):
			c.Scenarios[i] = s
		case s.Outcome == model.Correct:
			c.Scenarios[i] = s.Name
		default:
			c.Scenarios[i] = s.Name + "=" + string(s.Outcome)
		}
	}
	return c
}
