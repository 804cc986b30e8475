package versions

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Published is what a package registry lists for a package: every version and its tags.
type Published struct {
	Package  string            `json:"package"`
	Versions []string          `json:"versions"`            // as published, any order
	Tags     map[string]string `json:"dist_tags,omitempty"` // dist-tag -> version, e.g. latest
}

// Releases returns the published versions that parse and are not pre-releases, oldest first.
// "last:N", ranges and bisect walk releases; a pre-release is only ever chosen by name.
func (p Published) Releases() []string {
	var out []string
	for _, s := range p.Versions {
		if v, err := Parse(s); err == nil && !v.Prerelease() {
			out = append(out, s)
		}
	}
	return Sorted(out)
}

// Has reports whether version s was published.
func (p Published) Has(s string) bool { return slices.Contains(p.Versions, s) }

// Kind says how a Selector picks versions.
type Kind int

// Kinds of selectors.
const (
	Exact   Kind = iota // one version, by number
	Tag                 // a dist-tag, e.g. latest
	InRange             // every release in a range
	Last                // the newest N releases
	Pinned              // the version the adapter uses when none is named (make deps installs it)
)

// Selector is one way of naming versions, as written in a matrix or after NAME@ on the command
// line: "0.0.60", "latest", ">=0.0.60 <=0.0.83", "last:5", "pinned".
type Selector struct {
	Text    string // as written
	Kind    Kind
	Version Version // Exact
	Tag     string  // Tag
	Range   Range   // InRange
	N       int     // Last
}

// PinnedWord names the adapter's default version in a selector.
const PinnedWord = "pinned"

var (
	tagName  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)
	lastExpr = regexp.MustCompile(`^last\s*[:=]\s*(\d+)$`)
)

// ParseSelector reads one selector.
func ParseSelector(s string) (Selector, error) {
	t := strings.TrimSpace(s)
	sel := Selector{Text: t}
	switch {
	case t == "":
		return sel, fmt.Errorf("empty version (want e.g. 0.0.83, latest, \">=0.0.60 <=0.0.83\" or last:5)")
	case t == PinnedWord:
		sel.Kind = Pinned
		return sel, nil
	case strings.HasPrefix(t, "last"):
		m := lastExpr.FindStringSubmatch(t)
		if m == nil {
			return sel, fmt.Errorf("%q: want last:N, the newest N releases (e.g. last:5)", t)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 {
			return sel, fmt.Errorf("%q: N must be at least 1", t)
		}
		return LastN(n), nil
	case t == "*" || strings.ContainsAny(t, "<>= ") || strings.ContainsRune(t, '*'):
		r, err := ParseRange(t)
		if err != nil {
			return sel, err
		}
		sel.Kind, sel.Range = InRange, r
		return sel, nil
	}
	if v, err := Parse(t); err == nil {
		sel.Kind, sel.Version = Exact, v
		sel.Text = v.String()
		return sel, nil
	}
	if tagName.MatchString(t) {
		sel.Kind, sel.Tag = Tag, t
		return sel, nil
	}
	return sel, fmt.Errorf("%q is not a version, a dist-tag, a range or last:N (e.g. 0.0.83, latest, \">=0.0.60 <=0.0.83\", last:5)", t)
}

// LastN selects the newest n releases.
func LastN(n int) Selector { return Selector{Text: "last:" + strconv.Itoa(n), Kind: Last, N: n} }

// NeedsIndex reports whether resolving the selector needs the registry's list of versions. An
// exact version and the pinned one do not, so a run naming only those works offline once the
// versions are installed.
func (s Selector) NeedsIndex() bool { return s.Kind != Exact && s.Kind != Pinned }

// Resolve returns the versions s selects from p, oldest first. pinned is the adapter's default
// version ("" when it has none).
func (s Selector) Resolve(p Published, pinned string) ([]string, error) {
	name := p.Package
	if name == "" {
		name = "the package"
	}
	switch s.Kind {
	case Pinned:
		if pinned == "" {
			return nil, fmt.Errorf("%q: this target has no pinned version (name one)", s.Text)
		}
		return []string{pinned}, nil
	case Exact:
		if len(p.Versions) > 0 && !p.Has(s.Version.String()) {
			return nil, fmt.Errorf("%s is not a published version of %s (%s)", s.Version, name, near(p, s.Version))
		}
		return []string{s.Version.String()}, nil
	case Tag:
		v, ok := p.Tags[s.Tag]
		if !ok {
			tags := make([]string, 0, len(p.Tags))
			for t := range p.Tags {
				tags = append(tags, t)
			}
			slices.Sort(tags)
			return nil, fmt.Errorf("%s has no dist-tag %q (tags: %s)", name, s.Tag, orNone(tags))
		}
		return []string{v}, nil
	case InRange:
		cands := p.Releases()
		if s.Range.mentionsPrerelease() {
			cands = Sorted(p.Versions)
		}
		var out []string
		for _, c := range cands {
			if v, err := Parse(c); err == nil && s.Range.Contains(v) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no release of %s in %q (releases: %s)", name, s.Range, span(p.Releases()))
		}
		return out, nil
	case Last:
		rel := p.Releases()
		if len(rel) == 0 {
			return nil, fmt.Errorf("%s has no releases", name)
		}
		return rel[max(0, len(rel)-s.N):], nil
	}
	return nil, fmt.Errorf("selector %q: unknown kind %d", s.Text, s.Kind)
}

// ResolveAll returns the union of what the selectors select, oldest first.
func ResolveAll(sels []Selector, p Published, pinned string) ([]string, error) {
	var all []string
	for _, s := range sels {
		vs, err := s.Resolve(p, pinned)
		if err != nil {
			return nil, err
		}
		all = append(all, vs...)
	}
	return Sorted(all), nil
}

// Between returns the releases from lo to hi inclusive, oldest first (lo and hi themselves even
// if they are pre-releases), for bisect.
func Between(p Published, lo, hi string) ([]string, error) {
	a, err := Parse(lo)
	if err != nil {
		return nil, err
	}
	b, err := Parse(hi)
	if err != nil {
		return nil, err
	}
	if Compare(a, b) >= 0 {
		return nil, fmt.Errorf("%s is not older than %s", lo, hi)
	}
	var out []string
	for _, s := range append(p.Releases(), lo, hi) {
		v, err := Parse(s)
		if err == nil && Compare(v, a) >= 0 && Compare(v, b) <= 0 {
			out = append(out, s)
		}
	}
	return Sorted(out), nil
}

// near names the published releases on either side of a missing version.
func near(p Published, v Version) string {
	rel := p.Releases()
	var below, above string
	for _, s := range rel {
		w, _ := Parse(s)
		if Compare(w, v) < 0 {
			below = s
		} else if above == "" {
			above = s
		}
	}
	switch {
	case below != "" && above != "":
		return "nearest: " + below + ", " + above
	case below != "":
		return "newest: " + below
	case above != "":
		return "oldest: " + above
	}
	return "none published"
}

func span(rel []string) string {
	switch len(rel) {
	case 0:
		return "none"
	case 1:
		return rel[0]
	}
	return fmt.Sprintf("%s .. %s, %d in all", rel[0], rel[len(rel)-1], len(rel))
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
