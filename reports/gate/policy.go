// Package gate is release qualification: it judges a report.json against a policy and lists,
// grouped, what blocks the release (fail-open first), the fail-closed bounds exceeded and the cells
// with too few trials, naming every known finding it accepts. `sandcheck gate report.json
// [--policy gate.yaml]` exits 1 when the Result failed.
package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Policy is gate.yaml. Every field is optional; see DefaultPolicy.
type Policy struct {
	// MaxFailClosedUpper bounds the upper end of the 95% interval of every row's fail-closed rate
	// (proxy-dead, allowed-blocked, unexpected sandbox-failed). Bounding the interval, not the
	// point estimate, means a clean result over too few trials does not pass: with Wilson, 0 of
	// n clears 5% only from n=73.
	MaxFailClosedUpper *float64 `yaml:"max_fail_closed_upper"`
	// Interval is the interval used for that bound: "wilson" (default) or "clopper-pearson".
	Interval string `yaml:"interval"`
	// MinTrials is the fewest measured trials each cell x scenario row must have. Its default is
	// the fewest clean trials whose 95% upper bound clears MaxFailClosedUpper with Interval (73
	// for 5% with Wilson, 72 with Clopper-Pearson): below that even a row with no failure cannot
	// show the bound, so any smaller default would only pretend to be evidence. A clean row
	// below that number is reported as insufficient evidence whatever MinTrials says.
	MinTrials *int `yaml:"min_trials"`
	// MaxHarnessRate bounds, per cell, the share of trials that were harness errors or timeouts
	// (default 0.05). They are kept out of every rate, so without a bound a harness that fails
	// most trials would leave a few clean ones to speak for the sandbox.
	MaxHarnessRate *float64 `yaml:"max_harness_rate"`
	// MinCells and MinScenarios are expected-count guards: a matrix that silently lost half its
	// cells must not pass because the remaining half was clean.
	MinCells     int `yaml:"min_cells"`
	MinScenarios int `yaml:"min_scenarios"`
	// RequiredScenarios must each have been measured in at least one cell.
	RequiredScenarios []string `yaml:"required_scenarios"`
	// MaxNotApplicable bounds, per cell x scenario row, the share of trials in which the scenario
	// could not be judged (not-applicable: the target cannot express it). Unset, rows may be n/a
	// freely, but a required scenario n/a in every trial of every cell still blocks (it was not
	// measured). Set (0.0 forbids any), a row above it blocks: a typo in a capability, or an
	// adapter that stopped claiming one, must not shrink what a release is qualified on.
	MaxNotApplicable *float64 `yaml:"max_not_applicable"`
	// AcceptKnown lists known-finding ids (knownfindings/, "<target>:<scenario>[#<check>]")
	// whose failures the release accepts. A known finding is still a failure: without its id
	// here it fails the gate like any other, and every accepted one is named in the output.
	AcceptKnown []string `yaml:"accept_known"`
}

// Defaults when the policy sets none.
const (
	DefaultMaxFailClosedUpper = 0.05
	DefaultMaxHarnessRate     = 0.05
)

// DefaultPolicy is what the gate applies without a policy file.
func DefaultPolicy() Policy {
	p := Policy{}
	p.applyDefaults()
	return p
}

func (p *Policy) applyDefaults() {
	if p.MaxFailClosedUpper == nil {
		v := DefaultMaxFailClosedUpper
		p.MaxFailClosedUpper = &v
	}
	if p.Interval == "" {
		p.Interval = "wilson"
	}
	if p.MinTrials == nil {
		v := cleanTrialsFor(*p.MaxFailClosedUpper, p.Interval)
		p.MinTrials = &v
	}
	if p.MaxHarnessRate == nil {
		v := DefaultMaxHarnessRate
		p.MaxHarnessRate = &v
	}
}

// LoadPolicy reads and validates the policy file at path.
func LoadPolicy(path string) (Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, fmt.Errorf("gate policy: %w", err)
	}
	return ParsePolicy(data, path)
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)
var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type \S+$`)

// ParsePolicy decodes a policy strictly (unknown fields are errors: a misspelt bound must not
// silently fall back to the default) and reports problems as name:line: field: message.
func ParsePolicy(data []byte, name string) (Policy, error) {
	var p Policy
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Policy{}, fmt.Errorf("%s: %w", name, err)
	}
	keys := keyLines(&root)
	if line, ok := keys[removedFaultCells]; ok {
		return Policy{}, fmt.Errorf("%s:%d: %s: removed: every fail-open observation blocks, in fault cells too (one rule decides it); gate fault cells in a report of their own, or not at all: %w", name, line, removedFaultCells, errPolicy)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return Policy{}, fmt.Errorf("%s: %w", name, err)
		}
		var msgs []string
		for _, e := range te.Errors {
			m := lineRE.FindStringSubmatch(e)
			if m == nil {
				msgs = append(msgs, fmt.Sprintf("%s: %s", name, e))
				continue
			}
			line, _ := strconv.Atoi(m[1])
			if u := unknownFieldRE.FindStringSubmatch(m[2]); u != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%d: %s: unknown field (known: %s)", name, line, u[1], strings.Join(knownFields, ", ")))
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s:%d: %s: %s", name, line, keyAt(keys, line), m[2]))
		}
		return Policy{}, fmt.Errorf("%s: %w", strings.Join(msgs, "\n"), errPolicy)
	}
	fail := func(field, format string, a ...any) (Policy, error) {
		return Policy{}, fmt.Errorf("%s:%d: %s: %s: %w", name, keys[field], field, fmt.Sprintf(format, a...), errPolicy)
	}

	if v := p.MaxFailClosedUpper; v != nil && !(*v > 0 && *v <= 1) {
		return fail("max_fail_closed_upper", "%v is not in (0, 1]", *v)
	}
	if p.Interval != "" && p.Interval != "wilson" && p.Interval != "clopper-pearson" {
		return fail("interval", "%q is not wilson or clopper-pearson", p.Interval)
	}
	if p.MinTrials != nil && *p.MinTrials < 0 {
		return fail("min_trials", "%d < 0", *p.MinTrials)
	}
	if v := p.MaxHarnessRate; v != nil && !(*v >= 0 && *v <= 1) {
		return fail("max_harness_rate", "%v is not in [0, 1]", *v)
	}
	if v := p.MaxNotApplicable; v != nil && !(*v >= 0 && *v <= 1) {
		return fail("max_not_applicable", "%v is not in [0, 1]", *v)
	}
	for _, id := range p.AcceptKnown {
		if strings.TrimSpace(id) == "" {
			return fail("accept_known", "empty finding id")
		}
	}
	if p.MinCells < 0 {
		return fail("min_cells", "%d < 0", p.MinCells)
	}
	if p.MinScenarios < 0 {
		return fail("min_scenarios", "%d < 0", p.MinScenarios)
	}
	for _, s := range p.RequiredScenarios {
		if strings.TrimSpace(s) == "" {
			return fail("required_scenarios", "empty scenario name")
		}
	}
	p.applyDefaults()
	return p, nil
}

// errPolicy marks an invalid policy, so callers can tell it from a gate violation.
var errPolicy = errors.New("invalid gate policy")

var knownFields = []string{"max_fail_closed_upper", "interval", "min_trials", "max_harness_rate", "max_not_applicable", "min_cells", "min_scenarios", "required_scenarios", "accept_known"}

// removedFaultCells is a policy key of older releases that let fault cells fail open.
const removedFaultCells = "expected_fail_open_in_fault_cells"

// keyLines maps each top-level key to its line, for messages about values.
func keyLines(root *yaml.Node) map[string]int {
	out := map[string]int{}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return out
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i].Line
	}
	return out
}

// keyAt names the top-level key whose value starts on, or spans, line (best effort).
func keyAt(keys map[string]int, line int) string {
	best, bestLine := "", 0
	for k, l := range keys {
		if l <= line && l > bestLine {
			best, bestLine = k, l
		}
	}
	if best == "" {
		return "(document)"
	}
	return best
}
