package matrix

// The targets: entries of a matrix: which sandboxes, with which settings, at which versions.

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/matrix/yamlread"
	"github.com/sandcheck/sandcheck/versions"
)

// Target is one sandbox under test.
type Target struct {
	ID       string         // unique in the matrix; defaults to Name; what cells carry
	Name     string         // adapter name
	Settings map[string]any // free-form, interpreted by the adapter
	// SettingsAt is where each key of Settings was written ("m.yaml", 4, "targets[0].settings.path"),
	// for errors about what a setting names; nil for settings not from the file.
	SettingsAt map[string]yamlread.At
	// Versions select published versions of the sandbox (versions: in the file); none means
	// the adapter's own (pinned) install. Each version is a cell of its own.
	Versions []VersionSel
	// Resolved is what Versions select, oldest first: set by Parse when every selector is an
	// exact version, else by ResolveVersions.
	Resolved []string
}

// VersionSel is one entry of a target's versions:, with where it was written.
type VersionSel struct {
	versions.Selector
	Line  int    // 0: not from the file (a command-line flag)
	Field string // e.g. targets[0].versions[2], or the flag as given (--target srt@0.0.9)
}

func (p *parser) targets(n *yaml.Node) []Target {
	var out []Target
	seen := map[string]int{}
	for _, it := range p.List(n, "targets", "a list of targets (- name: srt)", "expected at least one target") {
		item, field, i := it.Node, it.Field, it.Index
		f := p.Fields(item, field, []string{"name", "id", "settings", "versions"}, "name, id, settings, versions")
		if item.Kind != yaml.MappingNode {
			continue
		}
		t := Target{}
		if v := f["name"]; v != nil {
			t.Name, _ = p.Str(v, field+".name", "an adapter name, e.g. srt")
		} else {
			p.Errorf(item, field+".name", "missing (expected an adapter name, e.g. srt)")
		}
		t.ID = t.Name
		if v := f["id"]; v != nil {
			if s, ok := p.Str(v, field+".id", "a unique name for this target in the matrix"); ok {
				t.ID = s
			}
		}
		if v := f["settings"]; v != nil {
			if v.Kind != yaml.MappingNode {
				p.Errorf(v, field+".settings", "expected a mapping of adapter settings, got %s", yamlread.KindName(v))
			} else if err := v.Decode(&t.Settings); err != nil {
				p.Refused(v, field+".settings", err)
			} else {
				t.SettingsAt = map[string]yamlread.At{}
				for k := 0; k+1 < len(v.Content); k += 2 {
					key := v.Content[k].Value
					t.SettingsAt[key] = yamlread.At{File: p.File, Line: v.Content[k+1].Line, Field: field + ".settings." + key}
				}
			}
		}
		if v := f["versions"]; v != nil {
			t.Versions = p.versions(v, field+".versions")
			if t.Name != "" && p.reg.Versioned != nil {
				if err := p.reg.Versioned(t.Name); err != nil {
					p.Refused(v, field+".versions", err)
				}
			}
			t.Resolved = exactOnly(t.Versions)
		}
		if t.Name == "" {
			continue
		}
		if t.ID != "" && !validName(t.ID) {
			p.Errorf(item, field+".id", "%q is not a plain name (expected letters, digits, '.', '_' or '-')", t.ID)
			continue
		}
		if prev, dup := seen[t.ID]; dup {
			p.Errorf(item, field, "target %q is already defined as targets[%d] (give one an id:)", t.ID, prev)
			continue
		}
		seen[t.ID] = i
		if p.reg.Target != nil {
			if err := p.reg.Target(t.Name, t.Settings); err != nil {
				at := item
				if v := f["name"]; v != nil {
					at = v
				}
				p.Refused(at, field+".name", err)
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// versions reads a target's versions: one selector ("latest", ">=0.0.60 <=0.0.83"), a list of
// them, or {last: N}; list items may be {last: N} too.
func (p *parser) versions(n *yaml.Node, field string) []VersionSel {
	const want = `a version, a dist-tag, a range, last:N, or a list of them (e.g. ["0.0.60", "latest"], {last: 5})`
	var out []VersionSel
	one := func(item *yaml.Node, field string) {
		item = yamlread.Resolve(item)
		switch {
		case item.Kind == yaml.MappingNode:
			f := p.Fields(item, field, []string{"last"}, "last: N")
			if v := f["last"]; v != nil {
				if k, ok := p.PosInt(v, field+".last", "the newest N releases"); ok {
					out = append(out, VersionSel{Selector: versions.LastN(k), Line: v.Line, Field: field})
				}
			} else if len(item.Content) == 0 {
				p.Errorf(item, field, "empty (expected %s)", want)
			}
		case item.Kind == yaml.ScalarNode && item.Tag != "!!null":
			sel, err := versions.ParseSelector(item.Value)
			if err != nil {
				p.Errorf(item, field, "%v", err)
				return
			}
			out = append(out, VersionSel{Selector: sel, Line: item.Line, Field: field})
		default:
			p.Errorf(item, field, "expected %s, got %s", want, yamlread.Describe(item))
		}
	}
	if n.Kind != yaml.SequenceNode {
		one(n, field)
		return out
	}
	if len(n.Content) == 0 {
		p.Errorf(n, field, "empty (expected %s; leave versions out for the pinned install)", want)
	}
	for i, item := range n.Content {
		one(item, fmt.Sprintf("%s[%d]", field, i))
	}
	return out
}

// exactOnly is the versions when every selector names one (no registry needed), else nil.
func exactOnly(sels []VersionSel) []string {
	var out []string
	for _, s := range sels {
		if s.Kind != versions.Exact {
			return nil
		}
		out = append(out, s.Version.String())
	}
	return versions.Sorted(out)
}

// Resolver returns the versions one selector of a target selects.
type Resolver func(t Target, sel versions.Selector) ([]string, error)

// ResolveVersions fills every versioned target's Resolved through resolve (the registry's version
// lists), so that Cells can expand them. Errors name the selector's file:line and field.
func (m *Matrix) ResolveVersions(resolve Resolver) error {
	var errs []error
	for i := range m.Targets {
		t := &m.Targets[i]
		if len(t.Versions) == 0 {
			continue
		}
		var all []string
		for _, sel := range t.Versions {
			vs, err := resolve(*t, sel.Selector)
			switch {
			case err != nil && sel.Line == 0: // from the command line: Field is the flag as given
				errs = append(errs, fmt.Errorf("%s: %w", sel.Field, err))
				continue
			case err != nil:
				errs = append(errs, &FieldError{File: m.File, Line: sel.Line, Field: sel.Field, Msg: err.Error(), Err: err})
				continue
			}
			all = append(all, vs...)
		}
		t.Resolved = versions.Sorted(all)
	}
	return errors.Join(errs...)
}

// VersionsOf returns the versions a target's cells run: its resolved versions, or [""] (the
// pinned install) when it names none.
func (t Target) VersionsOf() []string {
	if len(t.Versions) == 0 {
		return []string{""}
	}
	if len(t.Resolved) > 0 {
		return t.Resolved
	}
	out := make([]string, 0, len(t.Versions)) // unresolved: the selectors as written
	for _, s := range t.Versions {
		out = append(out, s.Text)
	}
	return out
}
