// Package knownfindings reads the documented lists of places where a real, healthy sandbox fails
// a sandcheck spec, which each target's adapter owns (targets/NAME/knownfindings.yaml, embedded
// and registered with targets.RegisterFindings), and decides whether a failing verdict is such a
// finding. A finding is keyed narrowly (target, version range, scenario, the
// check breached, outcome, fault), so a failure that differs in any of them is news and fails.
package knownfindings

import (
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// Finding is one place a sandbox fails a spec, with what it breaches.
type Finding struct {
	// ID is "TARGET:SCENARIO#CHECK", or "TARGET[FAULT]:SCENARIO#CHECK" for a finding that holds
	// under a fault, with "@USER" after the target part for one that holds for one user only
	// ("srt@root:..."); unique within a target's list.
	ID       string
	Target   string
	Versions Versions
	Scenario string
	Check    string
	Outcome  model.Outcome
	// Also lists further outcomes an intermittent finding shows (a race has more than one face).
	Also []model.Outcome
	// Fault is the injected fault the finding holds under; "" = the healthy sandbox only.
	Fault string
	// User is the one user (unprivileged, root, an account) the finding holds for; "" = whoever
	// the sandbox runs as.
	User string
	// Intermittent findings show in some trials only; the others pass.
	Intermittent bool
	Note         string
	// Source is the evidence: a URL, or a repository file and anchor (docs/families.md#known-findings).
	Source string
	// Pos is where the finding is written (file:line).
	Pos string
}

// Matches reports whether o is an outcome this finding shows.
func (f Finding) Matches(o model.Outcome) bool {
	if o == f.Outcome {
		return true
	}
	for _, a := range f.Also {
		if o == a {
			return true
		}
	}
	return false
}

// appliesTo says whether the finding holds for this target, version and fault.
func (f Finding) appliesTo(s Subject) bool {
	return s.Target == f.Target && f.Versions.Contains(s.Version) && faultMatches(f.Fault, s.Fault) &&
		(f.User == "" || f.User == s.User)
}

// Covers reports whether the finding covers a breach observed on sub.
func (f Finding) Covers(sub Subject, b model.Breach) bool {
	_, ok := cover([]Finding{f}, b, false)
	return ok && f.appliesTo(sub)
}

// faultMatches compares a finding's fault with the one injected: a bare NAME matches the fault
// whatever its parameters, NAME:k=v only that exact spelling.
func faultMatches(want, got string) bool {
	if want == got {
		return true
	}
	if want == "" || strings.Contains(want, ":") {
		return false
	}
	name, _, _ := strings.Cut(got, ":")
	return name == want
}

// List is the known findings of one target.
type List struct {
	Target   string
	File     string
	Findings []Finding
}

// Set is the lists of every target.
type Set map[string]List

// For returns the list of a target (empty when it has none).
func (s Set) For(target string) List {
	if l, ok := s[target]; ok {
		return l
	}
	return List{Target: target}
}

var (
	loadOnce sync.Once
	loaded   Set
	loadErr  error
)

// Load returns the lists of every linked target, validated.
func Load() (Set, error) {
	loadOnce.Do(func() {
		loaded, loadErr = loadFS()
	})
	return loaded, loadErr
}

func loadFS() (Set, error) {
	s := Set{}
	for _, name := range targets.FindingsNames() {
		f := targets.AllFindings()[name]
		l, err := Parse(f.File, f.Data)
		if err != nil {
			return nil, err
		}
		if l.Target != name {
			return nil, fmt.Errorf("%s: target: %q, want %q (the list of the target that owns it)", f.File, l.Target, name)
		}
		s[l.Target] = l
	}
	return s, nil
}

// ByScenario returns every finding keyed to a scenario.
func (l List) ByScenario(scenario string) []Finding {
	var out []Finding
	for _, f := range l.Findings {
		if f.Scenario == scenario {
			out = append(out, f)
		}
	}
	return out
}

// ID is a finding's id from its key.
func ID(target, fault, scenario, check string) string {
	return UserID(target, fault, "", scenario, check)
}

// UserID is ID for a finding that holds for one user only (user "" = any).
func UserID(target, fault, user, scenario, check string) string {
	if fault != "" {
		target += "[" + fault + "]"
	}
	if user != "" {
		target += "@" + user
	}
	return target + ":" + scenario + "#" + check
}

// Parse reads and validates one target's list. Errors name file:line: field: what was expected.
func Parse(file string, b []byte) (List, error) {
	l := List{File: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return l, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return l, fmt.Errorf("%s:%d: want a mapping with target and findings", file, max(doc.Line, 1))
	}
	p := parser{file: file}
	root := doc.Content[0]
	var findings *yaml.Node
	err := p.fields(root, "", map[string]func(v *yaml.Node) error{
		"target":   func(v *yaml.Node) error { return p.str(v, "target", &l.Target) },
		"findings": func(v *yaml.Node) error { findings = v; return nil },
	}, "target", "findings")
	if err != nil {
		return l, err
	}
	if findings.Kind != yaml.SequenceNode {
		return l, p.errf(findings, "findings", "want a list of findings")
	}
	ids := map[string]string{}
	for i, n := range findings.Content {
		f, err := p.finding(n, fmt.Sprintf("findings[%d]", i), l.Target)
		if err != nil {
			return l, err
		}
		if at, dup := ids[f.ID]; dup {
			return l, p.errf(n, fmt.Sprintf("findings[%d]", i), "a second finding %s (the first is at %s); one finding per target, fault, user, scenario and check: list further outcomes under also, widen versions", f.ID, at)
		}
		ids[f.ID] = f.Pos
		l.Findings = append(l.Findings, f)
	}
	return l, nil
}

type parser struct{ file string }

func (p parser) errf(n *yaml.Node, field, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", p.file, n.Line, field, fmt.Sprintf(format, args...))
}

// fields walks a mapping: every key must be known and appear once; required ones must appear.
func (p parser) fields(m *yaml.Node, prefix string, known map[string]func(*yaml.Node) error, required ...string) error {
	if m.Kind != yaml.MappingNode {
		return p.errf(m, strings.TrimSuffix(prefix, "."), "want a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		set, ok := known[k.Value]
		if !ok {
			var names []string
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return p.errf(k, prefix+k.Value, "unknown field (want one of %s)", strings.Join(names, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, prefix+k.Value, "given twice")
		}
		seen[k.Value] = true
		if err := set(v); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			return p.errf(m, prefix+r, "missing (required)")
		}
	}
	return nil
}

func (p parser) str(v *yaml.Node, field string, dst *string) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return p.errf(v, field, "want a string")
	}
	*dst = v.Value
	return nil
}

func (p parser) nonEmpty(v *yaml.Node, field string, dst *string) error {
	if err := p.str(v, field, dst); err != nil {
		return err
	}
	*dst = strings.TrimSpace(*dst)
	if *dst == "" {
		return p.errf(v, field, "empty")
	}
	return nil
}

func (p parser) outcome(v *yaml.Node, field string) (model.Outcome, error) {
	var s string
	if err := p.str(v, field, &s); err != nil {
		return "", err
	}
	o := model.Outcome(s)
	if !o.Valid() || o == model.NotApplicable {
		var all []string
		for _, k := range model.All {
			if k != model.NotApplicable {
				all = append(all, string(k))
			}
		}
		return "", p.errf(v, field, "unknown outcome %q (want one of %s)", s, strings.Join(all, ", "))
	}
	return o, nil
}

func (p parser) finding(n *yaml.Node, field, target string) (Finding, error) {
	f := Finding{Target: target, Pos: fmt.Sprintf("%s:%d", p.file, n.Line)}
	pre := field + "."
	var versions *yaml.Node
	err := p.fields(n, pre, map[string]func(*yaml.Node) error{
		"scenario": func(v *yaml.Node) error {
			if err := p.nonEmpty(v, pre+"scenario", &f.Scenario); err != nil {
				return err
			}
			if what, ok := aggregateOf(f.Scenario); ok {
				return p.errf(v, pre+"scenario", "%s sums up %s and is never a known finding by itself: key the finding to the check it breaches", f.Scenario, what)
			}
			if !strings.Contains(f.Scenario, "/") {
				return p.errf(v, pre+"scenario", "%q: want a scenario name like filesystem/secret/read", f.Scenario)
			}
			return nil
		},
		"check": func(v *yaml.Node) error { return p.nonEmpty(v, pre+"check", &f.Check) },
		"outcome": func(v *yaml.Node) (err error) {
			f.Outcome, err = p.outcome(v, pre+"outcome")
			return err
		},
		"also": func(v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, pre+"also", "want a list of outcomes")
			}
			for i, e := range v.Content {
				o, err := p.outcome(e, fmt.Sprintf("%salso[%d]", pre, i))
				if err != nil {
					return err
				}
				f.Also = append(f.Also, o)
			}
			return nil
		},
		"versions": func(v *yaml.Node) error { versions = v; return nil },
		"fault":    func(v *yaml.Node) error { return p.str(v, pre+"fault", &f.Fault) },
		"user": func(v *yaml.Node) error {
			if err := p.str(v, pre+"user", &f.User); err != nil {
				return err
			}
			if err := model.CheckUser(f.User); err != nil {
				return p.errf(v, pre+"user", "%v", err)
			}
			return nil
		},
		"intermittent": func(v *yaml.Node) error {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				return p.errf(v, pre+"intermittent", "want true or false")
			}
			return v.Decode(&f.Intermittent)
		},
		"note": func(v *yaml.Node) error { return p.nonEmpty(v, pre+"note", &f.Note) },
		"source": func(v *yaml.Node) error {
			if err := p.nonEmpty(v, pre+"source", &f.Source); err != nil {
				return err
			}
			if !validSource(f.Source) {
				return p.errf(v, pre+"source", "%q: want the evidence as an http(s) URL or FILE#anchor in this repository (docs/families.md#known-findings)", f.Source)
			}
			return nil
		},
	}, "scenario", "check", "outcome", "versions", "note", "source")
	if err != nil {
		return f, err
	}
	if f.Versions, err = p.versions(versions, pre+"versions"); err != nil {
		return f, err
	}
	if len(f.Also) > 0 && !f.Intermittent {
		return f, p.errf(n, pre+"also", "only an intermittent finding shows more than one outcome (set intermittent: true)")
	}
	for i, o := range f.Also {
		// Accepting a finding by id accepts every outcome it names: one that fails open under a
		// fail-closed id would be let through by whoever accepts the fail-closed one.
		if o.Severity() != f.Outcome.Severity() {
			return f, p.errf(n, fmt.Sprintf("%salso[%d]", pre, i), "%s is %s, the finding's outcome %s is %s: one finding, one severity (make a finding of its own for the %s face)",
				o, o.Severity(), f.Outcome, f.Outcome.Severity(), o)
		}
	}
	f.ID = UserID(f.Target, f.Fault, f.User, f.Scenario, f.Check)
	return f, nil
}

func (p parser) versions(v *yaml.Node, field string) (Versions, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		vs, err := ParseRange(v.Value)
		if err != nil {
			return vs, p.errf(v, field, "%v", err)
		}
		return vs, nil
	case yaml.SequenceNode:
		var list []string
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return Versions{}, p.errf(e, fmt.Sprintf("%s[%d]", field, i), "want a version")
			}
			list = append(list, e.Value)
		}
		vs, err := ParseList(list)
		if err != nil {
			return vs, p.errf(v, field, "%v", err)
		}
		return vs, nil
	}
	return Versions{}, p.errf(v, field, "want a range (\">=0.0.60 <=0.0.83\", \"*\") or a list of versions")
}

// validSource accepts an http(s) URL or a file in this repository with an anchor.
func validSource(s string) bool {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return true
	}
	file, anchor, ok := strings.Cut(s, "#")
	return ok && anchor != "" && file != "" && !strings.Contains(s, " ") &&
		!path.IsAbs(file) && !strings.HasPrefix(path.Clean(file), "..")
}
