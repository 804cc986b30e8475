package model

import (
	"encoding/json"
	"slices"
	"strings"
)

// CheckTrial is the check of a breach that no finer check explains: the trial or verdict as a
// whole (it timed out, the sandbox refused to start, an outcome no per-check result shows). No
// known finding may be keyed to it: it would cover whatever went wrong next.
const CheckTrial = "trial"

// Breach is one thing a verdict shows breached, in the terms a known finding is keyed by. The
// judge builds it, the known findings fill in Known, and it travels unchanged to the journal
// and every report.
type Breach struct {
	// Scenario is the per-check scenario a finding for this breach is keyed to: for a breach
	// inside an aggregate verdict, the check's own scenario (filesystem/secret/read).
	Scenario string `json:"scenario,omitempty"`
	// Check is the concrete thing breached: a path for filesystem checks ($WORKSPACE/...),
	// CHANNEL:ROLE for network channels, the condition for fail-closed and untrusted scenarios.
	Check   string  `json:"check,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	// What says it in words: "write $WORKSPACE/newrepo/.git/hooks/pre-commit",
	// "http: denied.sandcheck.test reached", "condition socat-missing: ran unconfined".
	What string `json:"what"`
	// Known is the id of the known finding that covers the breach, "" when none does. Records
	// written before breaches carried their own ids hold the verdict's ids here, ", "-separated:
	// then every one of them must be accepted.
	Known string `json:"known,omitempty"`
	// Egress lists the fixture servers' hits (Record.Egress lines, Hit.String) that this breach
	// accounts for. Accepting the breach's finding accepts these hits and no others: a hit no
	// accepted fail-open breach lists is fail-open, whatever else the trial showed.
	Egress []string `json:"egress,omitempty"`
}

// KnownIDs splits Known into its ids.
func (b Breach) KnownIDs() []string { return SplitIDs(b.Known) }

// SplitIDs splits a ", "-separated list of known finding ids, sorted, each once.
func SplitIDs(list string) []string {
	var ids []string
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Words are the breaches' words.
func Words(bs []Breach) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.What)
	}
	return out
}

// UnmarshalJSON reads a breach: an object, or (records written before breaches were typed) its
// words alone.
func (b *Breach) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var what string
		if err := json.Unmarshal(data, &what); err != nil {
			return err
		}
		*b = Breach{What: what}
		return nil
	}
	type plain Breach
	return json.Unmarshal(data, (*plain)(b))
}

// legacy upgrades a verdict read from an older journal, whose breaches were words and whose
// covering ids were the verdict's: each breach then shows the verdict's outcome and is covered
// by all of those ids together, as the verdict was.
func (s *Scenario) legacy(known string) {
	for i := range s.Breaches {
		if s.Breaches[i].Outcome == "" {
			s.Breaches[i].Outcome = s.Outcome
		}
		if s.Breaches[i].Known == "" {
			s.Breaches[i].Known = known
		}
	}
	if len(s.Breaches) == 0 && known != "" && !s.Pass {
		// A failing verdict with ids but no words: its outcome, covered by those ids.
		s.Breaches = []Breach{{Check: CheckTrial, Outcome: s.Outcome, What: string(s.Outcome), Known: known}}
	}
}
