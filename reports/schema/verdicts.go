package schema

import "strings"

// Verdicts is how the trials themselves judged a cell (each scenario verdict's pass, breaches and
// covering known findings, the egress streamed), tallied per trial: what `sandcheck run` bases
// its exit code and summary on. The rates of Counts are the measurement; these say which
// failures no known finding explains.
type Verdicts struct {
	FailOpen int `json:"fail_open"` // trials with a fail-open outside the known findings, egress included
	Harness  int `json:"harness"`   // trials with harness trouble (harness-error, timeout), fail-opens aside
	Known    int `json:"known"`     // failing scenario verdicts known findings cover
	// Unknown counts failing scenario verdicts no known finding covers, plus Unexplained.
	Unknown int `json:"unknown"`
	// Unexplained counts trials that failed with no scenario verdict to say which (no result
	// line, or egress the scenarios do not account for).
	Unexplained int      `json:"unexplained"`
	Egress      int      `json:"egress"`                 // trials whose fixture servers logged traffic the policy denies
	EgressLines []string `json:"egress_lines,omitempty"` // the first few distinct such hits
	// Hints are, per outcome, the leading cause the first trial of that outcome gave.
	Hints map[string]string `json:"hints,omitempty"`
}

// ScenarioVerdicts is the same for one scenario of a cell.
type ScenarioVerdicts struct {
	Failed         int            `json:"failed"`                    // verdicts that did not pass, harness trouble included
	NotApplicable  int            `json:"not_applicable"`            // verdicts not-applicable
	FailedOutcomes map[string]int `json:"failed_outcomes,omitempty"` // outcome -> count over the failed
	Known          map[string]int `json:"known,omitempty"`           // known finding id -> failed verdicts it covered
	Unknown        int            `json:"unknown"`                   // failed verdicts no known finding covers, harness trouble aside
	// Breaches are the first distinct breaches of the failed verdicts, in the order seen.
	Breaches []string `json:"breaches,omitempty"`
	// Hints are, per failed outcome, the leading cause of the first verdict that gave one.
	Hints map[string]string `json:"hints,omitempty"`
}

// LeadingCause keeps a hint's leading cause, before the per-channel details ("; ").
func LeadingCause(hint string) string {
	if i := strings.Index(hint, "; "); i > 0 {
		return hint[:i]
	}
	return hint
}
