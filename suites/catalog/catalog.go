// Package catalog describes sandcheck's scenarios without running them: what each checks, what
// it needs of a target, the known-bads that must flag it, whether it is an aggregate and the
// known findings pinned to it. Each family lists its own (suites/NAME, Catalogue) from the
// tables its specs are built from; `sandcheck list` and docs/scenarios.md show them, and a test
// (cmd/sandcheck/internal/inspect) walks the compiled specs with Ginkgo's dry run and requires
// the spec tree and the catalogue to agree, spec for spec.
package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// Scenario is one scenario: one spec, judged under one id.
type Scenario struct {
	ID     string `json:"id"`
	Family string `json:"family"`
	// Labels are every label the spec carries, its containers' and its own: what
	// --label-filter matches.
	Labels []string `json:"labels"`
	// Spec is the spec's own text, as Ginkgo shows it; What says in a sentence what is checked
	// (the spec's text where that is one already).
	Spec string `json:"spec"`
	What string `json:"what"`
	// Needs is what a target must have for the scenario to apply; on any other target the
	// verdict is not-applicable.
	Needs Needs `json:"needs"`
	// KnownBads are the faults that must flag the scenario; none declared when empty.
	KnownBads []KnownBad `json:"known_bads"`
	// Condition is the fault the scenario itself injects into a healthy sandbox (fail-closed):
	// the sandbox must answer it by refusing to run, or by still enforcing.
	Condition string `json:"condition,omitempty"`
	// Aggregate: the verdict sums up the checks of other scenarios; no known finding is keyed
	// to it (knownfindings.DeclareAggregate).
	Aggregate bool `json:"aggregate"`
	// Findings are the known findings pinned to the scenario, every target's.
	Findings []Finding `json:"known_findings"`
}

// Needs is what a scenario needs of a target.
type Needs struct {
	Capabilities []model.Capability `json:"capabilities,omitempty"`
	// AllowList: the scenario tests an allow-list (through a proxy, or a policy that lets
	// something through); a deny-all target has none, so it is not-applicable there.
	AllowList bool `json:"allow_list,omitempty"`
	// Target: the one target the scenario is about (a setting of its own).
	Target string `json:"target,omitempty"`
	// Seams: the ways in a condition acts through (a fail-closed condition's fault); a target
	// that does not offer them cannot be put in that condition.
	Seams []model.Seam `json:"seams,omitempty"`
}

// Capability is the needs of one capability.
func Capability(c ...model.Capability) Needs { return Needs{Capabilities: c} }

// Lacks says what of the needs a target lacks, in words for a not-applicable verdict; "" when
// it has everything.
func (n Needs) Lacks(t targets.Target) string {
	var out []string
	if n.Target != "" && t.Name() != n.Target {
		out = append(out, "it is not "+n.Target)
	}
	for _, c := range n.Capabilities {
		if !targets.Has(t, c) {
			out = append(out, "it does not claim "+string(c))
		}
	}
	if n.AllowList && targets.DenyAll(t) {
		out = append(out, "it is a deny-all sandbox (no allow-list)")
	}
	if !targets.Offers(t, n.Seams...) {
		out = append(out, "it does not offer "+joinSeams(n.Seams))
	}
	if len(out) == 0 {
		return ""
	}
	return t.Name() + ": " + strings.Join(out, "; ")
}

func joinSeams(ss []model.Seam) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

// String is the needs in a few words ("any target" when none).
func (n Needs) String() string {
	var out []string
	if n.Target != "" {
		out = append(out, "target "+n.Target)
	}
	for _, c := range n.Capabilities {
		out = append(out, string(c))
	}
	if n.AllowList {
		out = append(out, "an allow-list (not deny-all)")
	}
	if len(n.Seams) > 0 {
		out = append(out, "seams "+joinSeams(n.Seams))
	}
	if len(out) == 0 {
		return "any target"
	}
	return strings.Join(out, ", ")
}

// KnownBad is a fault that must flag a scenario, or a published release of a target that has
// the bug (Release; no fault).
type KnownBad struct {
	// Fault as --fault names it, parameters included; "" for a release.
	Fault string `json:"fault"`
	// Release is the target's published release that has the bug, and Fixed the first one
	// after it that passes (both run under User).
	Release string `json:"release,omitempty"`
	Fixed   string `json:"fixed,omitempty"`
	// Target is the target it is run on; "" any target whose seams it reaches.
	Target string `json:"target,omitempty"`
	// User is who the sandbox runs as for it to show; "" the default user.
	User string `json:"user,omitempty"`
	// Expect is the outcome it must produce; "" any failing one.
	Expect model.Outcome `json:"expect,omitempty"`
	// Rate: it fails a fraction of the trials (the fault's p), not every one.
	Rate bool `json:"rate,omitempty"`
}

// String is the known-bad in a few words: "bad-proxy on srt: non-enforcing".
func (k KnownBad) String() string {
	s := k.Fault
	switch {
	case k.Release != "":
		s = k.Name()
	case k.Target != "":
		s += " on " + k.Target
	}
	if k.User != "" {
		s += " as " + k.User
	}
	switch {
	case k.Expect == "":
		s += ": flagged"
	case k.Rate:
		s += ": " + string(k.Expect) + " at rate p"
	default:
		s += ": " + string(k.Expect)
	}
	if k.Fixed != "" {
		s += " (fixed in " + k.Fixed + ")"
	}
	return s
}

// Name is the known-bad's name in a list: its fault, or the release (srt@0.0.65).
func (k KnownBad) Name() string {
	if k.Release != "" {
		return k.Target + "@" + k.Release
	}
	return k.Fault
}

// Flags is a known-bad together with the scenarios it must flag, the way families declare them.
type Flags struct {
	KnownBad
	Scenarios []string
}

// Of lists the known-bads, of those given, that flag a scenario.
func Of(id string, fs []Flags) []KnownBad {
	var out []KnownBad
	for _, f := range fs {
		if slices.Contains(f.Scenarios, id) {
			out = append(out, f.KnownBad)
		}
	}
	return out
}

// Finding is a known finding pinned to a scenario.
type Finding struct {
	Target       string        `json:"target"`
	ID           string        `json:"id"`
	Outcome      model.Outcome `json:"outcome"`
	Versions     string        `json:"versions"`
	Fault        string        `json:"fault,omitempty"`
	User         string        `json:"user,omitempty"`
	Intermittent bool          `json:"intermittent,omitempty"`
}

// String is the finding in a few words: its id, outcome and versions.
func (f Finding) String() string {
	s := fmt.Sprintf("%s (%s, %s", f.ID, f.Outcome, f.Versions)
	if f.Intermittent {
		s += ", intermittent"
	}
	return s + ")"
}

// Complete fills in what the families do not say themselves: each scenario's family (its id's
// first element), whether it is an aggregate (as its family declared it) and the known findings
// pinned to it, every target's, by target then id.
func Complete(scs []Scenario, set knownfindings.Set) []Scenario {
	byScenario := map[string][]Finding{}
	for _, l := range set {
		for _, f := range l.Findings {
			byScenario[f.Scenario] = append(byScenario[f.Scenario], Finding{Target: f.Target, ID: f.ID, Outcome: f.Outcome,
				Versions: f.Versions.Text, Fault: f.Fault, User: f.User, Intermittent: f.Intermittent})
		}
	}
	out := make([]Scenario, len(scs))
	for i, sc := range scs {
		sc.Family, _, _ = strings.Cut(sc.ID, "/")
		sc.Labels = union(sc.Labels)
		sc.Aggregate = knownfindings.IsAggregate(sc.ID)
		sc.Findings = byScenario[sc.ID]
		sort.Slice(sc.Findings, func(a, b int) bool {
			x, y := sc.Findings[a], sc.Findings[b]
			return x.Target < y.Target || x.Target == y.Target && x.ID < y.ID
		})
		if sc.KnownBads == nil {
			sc.KnownBads = []KnownBad{}
		}
		if sc.Findings == nil {
			sc.Findings = []Finding{}
		}
		out[i] = sc
	}
	return out
}

// union is labels without repeats, as Ginkgo unites a spec's labels with its containers'.
func union(labels []string) []string {
	var out []string
	for _, l := range labels {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
