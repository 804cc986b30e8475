package knownfindings

import (
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// Subject is what a verdict was observed on: the target, its version as the adapter reports it
// (normalised for ranges), the fault injected ("" = the healthy sandbox) and the user.
type Subject struct {
	Target  string
	Version string
	Fault   string
	User    string // who the sandbox ran as: unprivileged, root or an account's name
}

func (s Subject) String() string {
	out := s.Target
	if v := NormalizeVersion(s.Version); v != "" {
		out += " " + v
	} else {
		out += " (version unknown)"
	}
	if s.Fault != "" {
		out += " under fault " + s.Fault
	}
	if s.User != "" {
		out += " as " + s.User
	}
	return out
}

// CheckTrial is the check of a breach that no finer check explains: the trial as a whole
// (it timed out, the sandbox refused to start, or evidence beyond the per-check results).
const CheckTrial = "trial"

// Breach is one thing a verdict shows breached, in the breach's own terms.
type Breach struct {
	// Scenario is the per-check scenario a finding for this breach is keyed to (for a breach
	// inside an aggregate verdict, the check's own scenario, e.g. filesystem/secret/read).
	Scenario string `json:"scenario"`
	// Check is the concrete thing breached: a path for filesystem checks ($WORKSPACE/...),
	// CHANNEL:ROLE for network channels, the condition for fail-closed and untrusted scenarios.
	Check   string        `json:"check"`
	Outcome model.Outcome `json:"outcome"`
	// What says it in words: "write $WORKSPACE/newrepo/.git/hooks/pre-commit",
	// "http: denied.sandcheck.test reached", "condition socat-missing: ran unconfined".
	What string `json:"what"`
}

// Verdict is what the decision needs of one spec's verdict.
type Verdict struct {
	Scenario string
	Outcome  model.Outcome
	Pass     bool
	Hint     string
	Breaches []Breach
}

// Match is a breach and the finding that covers it.
type Match struct {
	Breach  Breach
	Finding Finding
}

// Decision is how a verdict stands against the known findings.
type Decision struct {
	// Breaches are the verdict's breaches, plus, for a failing verdict whose outcome none of
	// them shows, one for the trial as a whole (what the journal records).
	Breaches []Breach
	// Known lists the ids (", "-separated) of the findings covering every breach of a failing
	// verdict; "" when the verdict passed or any breach is new.
	Known string
	// Matched are the breaches a finding covers, New the ones none does.
	Matched []Match
	New     []Breach
	// Unreproduced lists the ids of findings keyed to this very scenario (for this subject) that
	// did not show although the scenario was judged: fixed, or intermittent.
	Unreproduced string
}

// Decide judges a verdict of sub against the findings: a failure is known only when every one of
// its breaches is covered by a finding of the same target, version, fault, scenario, check and
// outcome. A breach keyed to an aggregate scenario is never covered, so an aggregate is known
// only through its checks' findings. A failing verdict whose outcome no breach shows is not
// known either: the outcome stands unexplained.
func (l List) Decide(sub Subject, v Verdict) Decision {
	var d Decision
	var applicable []Finding
	if sub.Target == l.Target {
		for _, f := range l.Findings {
			if f.appliesTo(sub) {
				applicable = append(applicable, f)
			}
		}
	}
	shown := map[string]bool{}
	if !v.Pass {
		d.Breaches = v.Breaches
		if !showsOutcome(d.Breaches, v.Outcome) {
			what := string(v.Outcome)
			if v.Hint != "" {
				what += ": " + v.Hint
			}
			d.Breaches = append(d.Breaches[:len(d.Breaches):len(d.Breaches)], Breach{Scenario: v.Scenario, Check: CheckTrial, Outcome: v.Outcome, What: what})
		}
		for _, b := range d.Breaches {
			f, ok := cover(applicable, b)
			if !ok {
				d.New = append(d.New, b)
				continue
			}
			d.Matched = append(d.Matched, Match{b, f})
			shown[f.ID] = true
		}
		if len(d.New) == 0 {
			d.Known = joinIDs(d.Matched)
		}
	}
	if judged(v.Outcome, d.Breaches) {
		var missing []string
		for _, f := range applicable {
			if f.Scenario == v.Scenario && !shown[f.ID] {
				missing = append(missing, f.ID)
			}
		}
		d.Unreproduced = strings.Join(missing, ", ")
	}
	return d
}

// Decide judges a verdict against the list of sub's target (none: nothing is known).
func (s Set) Decide(sub Subject, v Verdict) Decision {
	return s.For(sub.Target).Decide(sub, v)
}

// judged says whether a verdict's evidence can tell a finding is gone: not when nothing could be
// judged (harness trouble, a timeout, not applicable) or the trial failed as a whole.
func judged(o model.Outcome, bs []Breach) bool {
	switch o {
	case model.HarnessError, model.Timeout, model.NotApplicable:
		return false
	}
	for _, b := range bs {
		if b.Check == CheckTrial {
			return false
		}
	}
	return true
}

func showsOutcome(bs []Breach, o model.Outcome) bool {
	for _, b := range bs {
		if b.Outcome == o {
			return true
		}
	}
	return false
}

func cover(fs []Finding, b Breach) (Finding, bool) {
	if IsAggregate(b.Scenario) {
		return Finding{}, false
	}
	for _, f := range fs {
		if f.Scenario == b.Scenario && f.Check == b.Check && f.Matches(b.Outcome) {
			return f, true
		}
	}
	return Finding{}, false
}

func joinIDs(ms []Match) string {
	var ids []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Finding.ID] {
			seen[m.Finding.ID] = true
			ids = append(ids, m.Finding.ID)
		}
	}
	return strings.Join(ids, ", ")
}

// aggregates are the scenarios whose verdict sums up other scenarios' checks. A finding is never
// keyed to one of them: it would hide every new failure of the checks inside.
var aggregates = map[string]string{
	"filesystem/isolation":      "the filesystem checks (filesystem/CHECK)",
	"network/seed":              "the network channels (network/channel/CHANNEL)",
	"network/enforcing":         "the network channels (network/channel/CHANNEL)",
	"network/proxy-alive":       "the network channels (network/channel/CHANNEL)",
	"network/allowed-reachable": "the network channels (network/channel/CHANNEL)",
	// Claude Code's filesystem checks under each workspace trust state (suites/claudesettings).
	"claude-settings/trust/trusted/filesystem":   "the filesystem checks (filesystem/CHECK)",
	"claude-settings/trust/untrusted/filesystem": "the filesystem checks (filesystem/CHECK)",
	"claude-settings/trust/fresh/filesystem":     "the filesystem checks (filesystem/CHECK)",
}

// IsAggregate reports whether a scenario's verdict sums up the checks of other scenarios.
func IsAggregate(scenario string) bool {
	_, ok := aggregates[scenario]
	return ok
}

// Aggregates lists the aggregate scenarios.
func Aggregates() []string {
	out := make([]string, 0, len(aggregates))
	for s := range aggregates {
		out = append(out, s)
	}
	return out
}

// ChannelScenario is the per-check scenario of a network channel.
func ChannelScenario(channel string) string { return "network/channel/" + channel }

// FSScenario is the per-check scenario of a filesystem check.
func FSScenario(check string) string { return "filesystem/" + check }
