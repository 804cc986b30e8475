// Package versions is sandcheck's vocabulary for sandbox versions: semantic versions in release
// order, ranges (">=0.0.60 <=0.0.83"), and the selectors a matrix or a command line names versions
// by ("0.0.60", "latest", a range, "last:5"), resolved against what a package registry published.
// It is a leaf: standard library only, so the matrix, the adapters, the runner and the reports can
// all share one notion of "which version, and in what order".
package versions

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Version is a semantic version: numeric components (missing ones count as 0) and an optional
// pre-release, which sorts before its release. Build metadata is kept in the text but ignored in
// comparisons, as in semver. npm's platform builds ("0.99.0-linux-x64") are pre-releases.
type Version struct {
	text string
	nums []int
	pre  []string
}

// Parse reads a version such as "0.0.83", "v1.2", "0.128.0-alpha.1".
func Parse(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	core, _, _ := strings.Cut(t, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	v := Version{text: t}
	if core == "" {
		return v, fmt.Errorf("%q is not a version (want numbers separated by dots, like 0.0.83)", s)
	}
	for _, p := range strings.Split(core, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || !digits(p) {
			return v, fmt.Errorf("%q is not a version (want numbers separated by dots, like 0.0.83)", s)
		}
		v.nums = append(v.nums, n)
	}
	if hasPre {
		if pre == "" {
			return v, fmt.Errorf("%q: empty pre-release after '-'", s)
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, nil
}

// MustParse is Parse for constants in tables; it panics on a bad version.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String is the version as written, without a leading "v".
func (v Version) String() string { return v.text }

// IsZero reports whether v is the zero Version (never parsed).
func (v Version) IsZero() bool { return len(v.nums) == 0 }

// Prerelease reports whether v has a pre-release part (never chosen by "latest" or "last:N").
func (v Version) Prerelease() bool { return len(v.pre) > 0 }

// Compare orders a and b: -1, 0 or +1.
func Compare(a, b Version) int {
	for i := 0; i < max(len(a.nums), len(b.nums)); i++ {
		if c := cmpInt(at(a.nums, i), at(b.nums, i)); c != 0 {
			return c
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1 // a release follows its pre-releases
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < min(len(a.pre), len(b.pre)); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, errx := strconv.Atoi(x)
		yn, erry := strconv.Atoi(y)
		switch {
		case errx == nil && erry == nil:
			if xn != yn {
				return cmpInt(xn, yn)
			}
		case errx == nil:
			return -1 // numeric identifiers sort before alphanumeric ones
		case erry == nil:
			return 1
		case x != y:
			return strings.Compare(x, y)
		}
	}
	return cmpInt(len(a.pre), len(b.pre))
}

// CompareStrings orders two version strings; text that is not a version sorts after every
// version, alphabetically, so a list with a stray name still sorts deterministically.
func CompareStrings(a, b string) int {
	va, erra := Parse(a)
	vb, errb := Parse(b)
	switch {
	case erra == nil && errb == nil:
		if c := Compare(va, vb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case erra == nil:
		return -1
	case errb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// Sort orders version strings oldest first, in place (see CompareStrings).
func Sort(list []string) { slices.SortStableFunc(list, CompareStrings) }

// Sorted returns the distinct versions of list, oldest first.
func Sorted(list []string) []string {
	out := slices.Clone(list)
	Sort(out)
	return slices.Compact(out)
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func at(s []int, i int) int {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// constraint is one comparison of a range, e.g. ">=0.0.60".
type constraint struct {
	op string
	v  Version
}

func (c constraint) holds(v Version) bool {
	d := Compare(v, c.v)
	switch c.op {
	case ">=":
		return d >= 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case "<":
		return d < 0
	}
	return d == 0
}

// Range is a set of versions: "*" (any), or comparisons that must all hold, separated by spaces
// (">=0.0.60 <=0.0.83", ">0.0.70", "=0.0.83" or just "0.0.83").
type Range struct {
	text string
	any  bool
	cons []constraint
}

// rangeOps are the comparison operators a range may use, longest first.
var rangeOps = []string{">=", "<=", ">", "<", "="}

// ParseRange reads a range.
func ParseRange(s string) (Range, error) {
	r := Range{text: strings.TrimSpace(s)}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return r, fmt.Errorf("empty range (want e.g. \">=0.0.60 <=0.0.83\", \"0.0.83\" or \"*\")")
	}
	if len(fields) == 1 && fields[0] == "*" {
		r.any = true
		return r, nil
	}
	for _, f := range fields {
		op := ""
		for _, o := range rangeOps {
			if strings.HasPrefix(f, o) {
				op = o
				break
			}
		}
		v, err := Parse(f[len(op):])
		if err != nil {
			return r, fmt.Errorf("range %q: %w", s, err)
		}
		r.cons = append(r.cons, constraint{op, v})
	}
	return r, nil
}

// Contains reports whether v is in the range.
func (r Range) Contains(v Version) bool {
	if r.any {
		return true
	}
	for _, c := range r.cons {
		if !c.holds(v) {
			return false
		}
	}
	return len(r.cons) > 0
}

// mentionsPrerelease reports whether a bound of the range is itself a pre-release: only then do
// pre-releases belong in it (as with npm's ranges).
func (r Range) mentionsPrerelease() bool {
	for _, c := range r.cons {
		if c.v.Prerelease() {
			return true
		}
	}
	return false
}

func (r Range) String() string { return r.text }

// versionText finds a version inside what a sandbox says about itself ("bubblewrap 0.8.0",
// "codex-cli 0.171.0"): at least two numeric components.
var versionText = regexp.MustCompile(`v?[0-9]+(?:\.[0-9]+)+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?`)

// Extract returns the bare version in an adapter's self-description ("0.0.83" from
// "@anthropic-ai/sandbox-runtime@0.0.83"), or "" when there is none ("unknown").
func Extract(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:] // npm: NAME@VERSION, the name may itself hold '@' and '-'
	}
	return strings.TrimPrefix(versionText.FindString(s), "v")
}

// Any reports whether the range is "*", which holds even for a build whose version is unknown.
func (r Range) Any() bool { return r.any }
