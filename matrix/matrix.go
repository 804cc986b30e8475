// Package matrix reads the YAML file that says what to run: sandboxes (targets), where to run them
// (hosts), which scenarios, which faults, and how many trials. Everything is validated before any
// trial runs, and every error names file:line, the field, and what was expected. Expansion into
// cells is deterministic so shards, resumes and baselines agree on what a cell is.
package matrix

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/matrix/yamlread"
	"github.com/sandcheck/sandcheck/model"
)

// Matrix is a validated matrix file.
type Matrix struct {
	File      string
	Targets   []Target
	Hosts     []Host
	Scenarios string   // Ginkgo label filter; "" = every scenario
	Faults    []string // normalized: "" = healthy, else NAME[:k=v,...]
	// Trials is the fixed number of trials per cell; with Adaptive it is Adaptive.Max.
	Trials   int
	Adaptive *Adaptive
	Parallel int
	Timeout  time.Duration // per trial
}

// KindLocal is the kind of the one host a matrix without hosts: has, this machine. Every other
// kind, and what its entries hold, is its driver's (runner/hosts/<kind>), known through Registry.
const KindLocal = "local"

// Adaptive is a sequential stop rule: run until the failure rate is decided to be <= P0 or
// >= P1 (error rates Alpha, Beta), or Max trials. The caller backs it with SPRT.
type Adaptive struct {
	Rule        string // as written, e.g. "rate<=0.01 vs rate>=0.05"
	P0, P1      float64
	Alpha, Beta float64
	Max         int
}

// Registry tells the matrix which names exist; the matrix itself knows none. A nil func accepts
// everything. Returned errors are shown after file:line and the field, so they should say what
// was expected (e.g. the known names).
type Registry struct {
	Target func(name string, settings map[string]any) error
	Fault  func(spec string) error
	// Versioned says whether the named target can be run at chosen versions (nil error), or
	// why not (its sandbox does not come from a registry sandcheck installs from).
	Versioned func(name string) error
	// HostKinds are the host kinds this build drives, by kind (see HostKind). Nil accepts every
	// kind with whatever keys it has, and reads no settings.
	HostKinds map[string]HostKind
}

// Defaults applied to keys the file leaves out.
const (
	DefaultTrials   = 20
	DefaultParallel = 1
	DefaultTimeout  = 5 * time.Minute
)

//go:embed default.yaml
var defaultYAML []byte

// Default is the embedded matrix `sandcheck run` uses without --matrix: local host, srt, every
// scenario, 20 trials.
func Default(reg Registry) (*Matrix, error) {
	return Parse("(default matrix)", defaultYAML, reg)
}

// DefaultYAML returns the embedded default matrix, e.g. to print it as a starting point.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// Load reads and validates the matrix file at path.
func Load(path string, reg Registry) (*Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	return Parse(path, data, reg)
}

// FieldError is one problem in a matrix file: file:line, the field, what was expected.
type FieldError = yamlread.FieldError

// parser collects every error instead of stopping at the first: a user fixing a file wants them all.
type parser struct {
	*yamlread.Reader
	reg Registry
}

// Parse validates a matrix held in memory; file names it in errors.
func Parse(file string, data []byte, reg Registry) (*Matrix, error) {
	doc, err := yamlread.Document(file, data, "matrix", "a mapping with at least targets:")
	if err != nil {
		return nil, err
	}
	p := &parser{Reader: &yamlread.Reader{File: file}, reg: reg}
	m := p.matrix(doc)
	if err := p.Err(); err != nil {
		return nil, err
	}
	m.File = file
	return m, nil
}

var topKeys = []string{"targets", "hosts", "scenarios", "faults", "trials", "parallel", "timeout"}

func (p *parser) matrix(doc *yaml.Node) *Matrix {
	m := &Matrix{Trials: DefaultTrials, Parallel: DefaultParallel, Timeout: DefaultTimeout, Faults: []string{""}}
	root := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			p.Errorf(doc, "", "empty matrix (expected a mapping with at least targets:)")
			return m
		}
		root = yamlread.Resolve(doc.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		p.Errorf(root, "", "empty matrix (expected a mapping with at least targets:)")
		return m
	}
	f := p.Fields(root, "", topKeys, "the matrix: "+strings.Join(topKeys, ", "))
	if root.Kind != yaml.MappingNode {
		return m
	}
	if n := f["targets"]; n != nil {
		m.Targets = p.targets(n)
	} else {
		p.Errorf(root, "targets", "missing (expected a list of sandboxes under test, e.g. - name: srt)")
	}
	if n := f["hosts"]; n != nil {
		m.Hosts = p.hosts(n)
	} else {
		m.Hosts = []Host{{Name: "local", Kind: KindLocal, Users: []string{model.UserDefault}}} // the one host that needs no description
		if k, ok := p.reg.HostKinds[KindLocal]; ok && k.Unavailable != "" {
			p.Errorf(root, "hosts", "missing, i.e. the local host; %s", k.Unavailable)
		}
	}
	if n := f["scenarios"]; n != nil {
		if s, ok := p.Str(n, "scenarios", "a Ginkgo label filter string, e.g. \"network\""); ok {
			m.Scenarios = strings.TrimSpace(s)
		}
	}
	if n := f["faults"]; n != nil {
		m.Faults = p.faults(n)
	}
	if n := f["trials"]; n != nil {
		m.Trials, m.Adaptive = p.trials(n)
	}
	if n := f["parallel"]; n != nil {
		if v, ok := p.PosInt(n, "parallel", "the number of trials run at once"); ok {
			m.Parallel = v
		}
	}
	if n := f["timeout"]; n != nil {
		if d, ok := p.Duration(n, "timeout", "the deadline of one trial"); ok {
			m.Timeout = d
		}
	}
	return m
}

func (p *parser) faults(n *yaml.Node) []string {
	var out []string
	seen := map[string]int{}
	for _, it := range p.List(n, "faults", "a list of fault names (\"\" or none for a healthy sandbox)",
		"expected at least one entry; use [\"\"] or leave faults out for a healthy sandbox only") {
		item, field, i := it.Node, it.Field, it.Index
		s, ok := p.Str(item, field, "a fault NAME[:k=v,...], or \"\"/none")
		if !ok {
			continue
		}
		s = NormalizeFault(s)
		if s != "" {
			if err := checkFaultSyntax(s); err != nil {
				p.Errorf(item, field, "%v", err)
				continue
			}
			if p.reg.Fault != nil {
				if err := p.reg.Fault(s); err != nil {
					p.Refused(item, field, err)
					continue
				}
			}
		}
		if prev, dup := seen[s]; dup {
			p.Errorf(item, field, "fault %q is already listed as faults[%d]", displayFault(s), prev)
			continue
		}
		seen[s] = i
		out = append(out, s)
	}
	return out
}

// NormalizeFault maps the spellings of "no fault" ("", "none") to "".
func NormalizeFault(s string) string {
	s = strings.TrimSpace(s)
	if s == "none" {
		return ""
	}
	return s
}

var faultName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
var faultParam = regexp.MustCompile(`^[a-z_][a-z0-9_]*=[^,=\s]+$`)

func checkFaultSyntax(s string) error {
	name, params, hasParams := strings.Cut(s, ":")
	if !faultName.MatchString(name) {
		return fmt.Errorf("bad fault name %q (expected NAME[:k=v,...] with NAME in lower-case letters, digits and '-')", name)
	}
	if hasParams {
		for kv := range strings.SplitSeq(params, ",") {
			if !faultParam.MatchString(kv) {
				return fmt.Errorf("bad fault parameter %q in %q (expected k=v, comma-separated)", kv, s)
			}
		}
	}
	return nil
}

var untilRule = regexp.MustCompile(`^\s*rate\s*<=\s*([0-9]*\.?[0-9]+)\s+vs\s+rate\s*>=\s*([0-9]*\.?[0-9]+)\s*$`)

func (p *parser) trials(n *yaml.Node) (int, *Adaptive) {
	if n.Kind == yaml.ScalarNode {
		v, ok := p.PosInt(n, "trials", "the number of trials per cell, or {until: ..., max: ...}")
		if !ok {
			return DefaultTrials, nil
		}
		return v, nil
	}
	f := p.Fields(n, "trials", []string{"until", "alpha", "beta", "max"}, "a number, or until, alpha, beta, max")
	if n.Kind != yaml.MappingNode {
		return DefaultTrials, nil
	}
	a := &Adaptive{Alpha: 0.05, Beta: 0.05}
	ok := true
	if v := f["until"]; v != nil {
		s, sok := p.Str(v, "trials.until", `a rule "rate<=P0 vs rate>=P1"`)
		ok = ok && sok
		if sok {
			mm := untilRule.FindStringSubmatch(s)
			if mm == nil {
				p.Errorf(v, "trials.until", `cannot read %q (expected "rate<=P0 vs rate>=P1", e.g. "rate<=0.01 vs rate>=0.05")`, s)
				ok = false
			} else {
				a.Rule = strings.TrimSpace(s)
				a.P0, _ = strconv.ParseFloat(mm[1], 64)
				a.P1, _ = strconv.ParseFloat(mm[2], 64)
				if !(a.P0 > 0 && a.P0 < a.P1 && a.P1 < 1) {
					p.Errorf(v, "trials.until", "rates %g and %g out of order (expected 0 < P0 < P1 < 1)", a.P0, a.P1)
					ok = false
				}
			}
		}
	} else {
		p.Errorf(n, "trials.until", `missing (expected a rule "rate<=P0 vs rate>=P1")`)
		ok = false
	}
	for _, key := range []string{"alpha", "beta"} {
		v := f[key]
		if v == nil {
			continue
		}
		var x float64
		if v.Kind != yaml.ScalarNode || v.Decode(&x) != nil || !(x > 0 && x < 0.5) {
			p.Errorf(v, "trials."+key, "expected an error rate between 0 and 0.5 (exclusive), got %s", yamlread.Describe(v))
			ok = false
			continue
		}
		if key == "alpha" {
			a.Alpha = x
		} else {
			a.Beta = x
		}
	}
	if v := f["max"]; v != nil {
		m, mok := p.PosInt(v, "trials.max", "the most trials per cell before giving up")
		ok = ok && mok
		a.Max = m
	} else {
		p.Errorf(n, "trials.max", "missing (expected the most trials per cell, e.g. 2000)")
		ok = false
	}
	if !ok {
		return DefaultTrials, nil
	}
	return a.Max, a
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func validName(s string) bool { return plainName.MatchString(s) }

func displayFault(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Target returns the target whose ID is id (cells carry target IDs).
func (m *Matrix) Target(id string) (Target, bool) {
	for _, t := range m.Targets {
		if t.ID == id {
			return t, true
		}
	}
	return Target{}, false
}
