// Package classify turns what a probe saw, and what the fixture servers logged of the same run,
// into an outcome. The servers' log is read first: egress it shows outweighs anything else the
// trial did. Everything here is a pure function of its input, so it is table-tested with
// recorded real runs.
package classify

import "github.com/sandcheck/sandcheck/model"

// The outcome vocabulary is model's; these names keep code written against classify compiling.
type (
	Outcome  = model.Outcome
	Severity = model.Severity
)

const (
	Correct        = model.Correct
	ProxyDead      = model.ProxyDead
	NonEnforcing   = model.NonEnforcing
	AllowedBlocked = model.AllowedBlocked
	SandboxFailed  = model.SandboxFailed
	Residue        = model.Residue
	HarnessError   = model.HarnessError
	Timeout        = model.Timeout
	NotApplicable  = model.NotApplicable

	SevPass       = model.SevPass
	SevFailOpen   = model.SevFailOpen
	SevFailClosed = model.SevFailClosed
	SevHarness    = model.SevHarness
	SevSkip       = model.SevSkip
)

// All lists every outcome in report order (model.All).
var All = model.All

// Worst returns the most severe of the given outcomes (model.Worst).
func Worst(os ...Outcome) Outcome { return model.Worst(os...) }
