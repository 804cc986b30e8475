package knownfindings

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// versionText finds a version inside what a sandbox says about itself ("bubblewrap 0.8.0",
// "firejail version 0.9.72", "codex-cli 0.171.0"): at least two numeric components.
var versionText = regexp.MustCompile(`v?[0-9]+(?:\.[0-9]+)+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?`)

// NormalizeVersion turns a target's self-description (targets.Target.Version(), e.g.
// "@anthropic-ai/sandbox-runtime@0.0.83") into the bare version ranges are written in ("0.0.83").
// It returns "" when there is none ("unknown").
func NormalizeVersion(v string) string {
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		v = v[i+1:] // npm: NAME@VERSION, the name may itself hold '@' and '-'
	}
	m := versionText.FindString(v)
	return strings.TrimPrefix(m, "v")
}

// version is a semver-ish version: numeric components (missing ones count as 0) and an optional
// pre-release, which sorts before the release. Build metadata is ignored, as in semver.
type version struct {
	nums []int
	pre  []string
}

func parseVersion(s string) (version, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	var v version
	for _, p := range strings.Split(core, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("%q is not a version (want numbers separated by dots, like 0.0.83)", s)
		}
		v.nums = append(v.nums, n)
	}
	if hasPre {
		if pre == "" {
			return v, fmt.Errorf("%q: empty pre-release", s)
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, nil
}

func compareVersions(a, b version) int {
	for i := 0; i < max(len(a.nums), len(b.nums)); i++ {
		x, y := at(a.nums, i), at(b.nums, i)
		if x != y {
			return cmpInt(x, y)
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
	v  version
}

func (c constraint) holds(v version) bool {
	d := compareVersions(v, c.v)
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

// Versions is the versions of a target a finding holds for: any version ("*"), a range whose
// comparisons must all hold (">=0.0.60 <=0.0.83", or open: ">=0.0.60"), or an explicit list.
type Versions struct {
	Text  string // as written, for messages
	any   bool
	cons  []constraint // all must hold
	exact []version    // any one may match
}

// ParseRange reads a range: "*", or comparisons separated by spaces, each one of >=, <=, >, <,
// = (or none, meaning =) followed by a version.
func ParseRange(s string) (Versions, error) {
	vs := Versions{Text: s}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return vs, fmt.Errorf("empty range (want e.g. \">=0.0.60 <=0.0.83\", \"0.0.83\" or \"*\")")
	}
	if len(fields) == 1 && fields[0] == "*" {
		vs.any = true
		return vs, nil
	}
	for _, f := range fields {
		op := ""
		for _, o := range []string{">=", "<=", ">", "<", "="} {
			if strings.HasPrefix(f, o) {
				op = o
				break
			}
		}
		v, err := parseVersion(f[len(op):])
		if err != nil {
			return vs, fmt.Errorf("range %q: %w", s, err)
		}
		vs.cons = append(vs.cons, constraint{op, v})
	}
	return vs, nil
}

// ParseList reads an explicit list of versions.
func ParseList(list []string) (Versions, error) {
	vs := Versions{Text: "[" + strings.Join(list, ", ") + "]"}
	if len(list) == 0 {
		return vs, fmt.Errorf("empty list of versions")
	}
	for _, s := range list {
		v, err := parseVersion(s)
		if err != nil {
			return vs, err
		}
		vs.exact = append(vs.exact, v)
	}
	return vs, nil
}

// Contains reports whether a target version, as the adapter reports it (normalised here), is
// among these versions. An unknown version is only within "*": a finding pinned to versions
// never excuses a sandbox whose version could not be told.
func (vs Versions) Contains(targetVersion string) bool {
	if vs.any {
		return true
	}
	n := NormalizeVersion(targetVersion)
	if n == "" {
		return false
	}
	v, err := parseVersion(n)
	if err != nil {
		return false
	}
	if len(vs.exact) > 0 {
		for _, e := range vs.exact {
			if compareVersions(v, e) == 0 {
				return true
			}
		}
		return false
	}
	for _, c := range vs.cons {
		if !c.holds(v) {
			return false
		}
	}
	return len(vs.cons) > 0
}

func (vs Versions) String() string { return vs.Text }
