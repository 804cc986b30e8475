package model

// Outcome is the verdict of one scenario in one trial. The names are the vocabulary of DESIGN.md
// and appear verbatim in journals, JSON reports and the gate.
type Outcome string

const (
	Correct        Outcome = "correct"         // allowed reachable, denied refused by policy
	ProxyDead      Outcome = "proxy-dead"      // requests fail before policy is consulted
	NonEnforcing   Outcome = "non-enforcing"   // the denied host was reached (its server logged it, or its token came back): fail-open
	AllowedBlocked Outcome = "allowed-blocked" // policy reached, but it refused the allowed host
	SandboxFailed  Outcome = "sandbox-failed"  // the sandbox refused to start, loudly
	Residue        Outcome = "residue"         // the sandbox left the workspace changed behind it
	HarnessError   Outcome = "harness-error"   // our fault, not the sandbox's: marker missing, tool missing
	Timeout        Outcome = "timeout"         // the trial exceeded its deadline
	NotApplicable  Outcome = "not-applicable"  // the target cannot express what the scenario needs
)

// Severity groups outcomes by what they mean for a user of the sandbox.
type Severity string

const (
	SevPass       Severity = "pass"
	SevFailOpen   Severity = "fail-open"   // security: traffic or data escaped the policy
	SevFailClosed Severity = "fail-closed" // availability: the sandbox blocked what it should allow
	SevHarness    Severity = "harness"     // not attributable to the sandbox; counted apart
	SevSkip       Severity = "skip"        // nothing was measured
)

// All lists every outcome in report order: pass first, then by decreasing severity.
var All = []Outcome{Correct, NonEnforcing, ProxyDead, AllowedBlocked, SandboxFailed, Residue, Timeout, HarnessError, NotApplicable}

// Severity of an outcome when the scenario expected the sandbox to work. Scenarios that expect the
// sandbox to refuse (fail-closed honesty) decide pass/fail themselves and record it per scenario.
func (o Outcome) Severity() Severity {
	switch o {
	case Correct:
		return SevPass
	case NonEnforcing:
		return SevFailOpen
	case ProxyDead, AllowedBlocked, SandboxFailed, Residue:
		return SevFailClosed
	case HarnessError, Timeout:
		return SevHarness
	default:
		return SevSkip
	}
}

// Valid reports whether o is one of the known outcomes.
func (o Outcome) Valid() bool {
	for _, k := range All {
		if k == o {
			return true
		}
	}
	return false
}

// rank orders outcomes for Worst: a security finding outranks everything, harness trouble ranks
// below any real sandbox verdict so it never hides one.
var rank = map[Outcome]int{
	NonEnforcing: 8, ProxyDead: 7, AllowedBlocked: 6, SandboxFailed: 5, Residue: 4, Timeout: 3, HarnessError: 2, Correct: 1, NotApplicable: 0,
}

// Worst returns the most severe of the given outcomes (NotApplicable when none).
func Worst(os ...Outcome) Outcome {
	w := NotApplicable
	for _, o := range os {
		if rank[o] > rank[w] {
			w = o
		}
	}
	return w
}
