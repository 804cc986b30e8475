package knownfindings

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/versions"
)

// NormalizeVersion turns a target's self-description (targets.Target.Version(), e.g.
// "@anthropic-ai/sandbox-runtime@0.0.83") into the bare version ranges are written in ("0.0.83").
// It returns "" when there is none ("unknown").
func NormalizeVersion(v string) string { return versions.Extract(v) }

// Versions is the versions of a target a finding holds for: any version ("*"), a range whose
// comparisons must all hold (">=0.0.60 <=0.0.83", or open: ">=0.0.60"), or an explicit list.
// Versions and ranges are the vocabulary of package versions, shared with matrices and bisect.
type Versions struct {
	Text  string // as written, for messages
	rng   *versions.Range
	exact []versions.Version // any one may match
}

// ParseRange reads a range: "*", or comparisons separated by spaces, each one of >=, <=, >, <,
// = (or none, meaning =) followed by a version.
func ParseRange(s string) (Versions, error) {
	vs := Versions{Text: s}
	r, err := versions.ParseRange(s)
	if err != nil {
		return vs, err
	}
	vs.rng = &r
	return vs, nil
}

// ParseList reads an explicit list of versions.
func ParseList(list []string) (Versions, error) {
	vs := Versions{Text: "[" + strings.Join(list, ", ") + "]"}
	if len(list) == 0 {
		return vs, fmt.Errorf("empty list of versions")
	}
	for _, s := range list {
		v, err := versions.Parse(s)
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
	if vs.rng != nil && vs.rng.Any() {
		return true
	}
	v, err := versions.Parse(NormalizeVersion(targetVersion))
	if err != nil {
		return false
	}
	if vs.rng != nil {
		return vs.rng.Contains(v)
	}
	for _, e := range vs.exact {
		if versions.Compare(v, e) == 0 {
			return true
		}
	}
	return false
}

func (vs Versions) String() string { return vs.Text }
