package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/versions"
)

// versionedRegistry lets srt and codex (npm-installed) take versions, not bwrap.
var versionedRegistry = func() Registry {
	r := testRegistry
	r.Versioned = func(name string) error {
		if name == "bwrap" {
			return errors.New("bwrap comes from the host's packages, not a registry (use container hosts for other bubblewrap versions)")
		}
		return nil
	}
	return r
}()

var published = versions.Published{Package: "@anthropic-ai/sandbox-runtime",
	Versions: []string{"0.0.58", "0.0.59", "0.0.60", "0.0.61", "0.0.81", "0.0.82", "0.0.83"},
	Tags:     map[string]string{"latest": "0.0.83"}}

func resolveFrom(p versions.Published) Resolver {
	return func(_ Target, sel versions.Selector) ([]string, error) { return sel.Resolve(p, "0.0.83") }
}

func TestVersionsExpandIntoCells(t *testing.T) {
	const doc = `targets:
  - name: srt
    versions: ["0.0.60", latest, ">=0.0.81 <0.0.83"]
  - name: srt
    id: recent
    versions: {last: 2}
  - name: codex
hosts:
  - {name: here, kind: local}
faults: ["", bridge-absent]
`
	m, err := Parse("m.yaml", []byte(doc), versionedRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if m.Targets[0].Resolved != nil {
		t.Fatalf("a list with a tag and a range cannot be resolved without the registry: %v", m.Targets[0].Resolved)
	}
	if err := m.ResolveVersions(resolveFrom(published)); err != nil {
		t.Fatal(err)
	}
	if got := m.Targets[0].Resolved; !slices.Equal(got, []string{"0.0.60", "0.0.81", "0.0.82", "0.0.83"}) {
		t.Fatalf("srt versions %v", got)
	}
	cells := m.Cells()
	var got []string
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%s@%s/%s", c.Target, c.Version, c.Fault))
	}
	want := []string{
		"srt@0.0.60/", "srt@0.0.60/bridge-absent", "srt@0.0.81/", "srt@0.0.81/bridge-absent",
		"srt@0.0.82/", "srt@0.0.82/bridge-absent", "srt@0.0.83/", "srt@0.0.83/bridge-absent",
		"recent@0.0.82/", "recent@0.0.82/bridge-absent", "recent@0.0.83/", "recent@0.0.83/bridge-absent",
		"codex@/", "codex@/bridge-absent",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("cells\n got %v\nwant %v", got, want)
	}
	ids := map[string]bool{}
	for _, c := range cells {
		if ids[c.ID] {
			t.Fatalf("duplicate cell id %s", c.ID)
		}
		ids[c.ID] = true
	}
	if !strings.HasPrefix(cells[0].ID, "srt-0.0.60.here-unprivileged.healthy-") {
		t.Errorf("versioned cell id %q should read target-version.host-user.fault", cells[0].ID)
	}
	// A cell of the pinned install keeps the id it had before versions existed (for its user).
	if c := cells[len(cells)-2]; c.ID != CellID("codex", HostAs("here", c.User), "", "") {
		t.Errorf("pinned cell id %s changed", c.ID)
	}
}

func TestExactVersionsResolveWithoutRegistry(t *testing.T) {
	m, err := Parse("m.yaml", []byte("targets:\n  - name: srt\n    versions: [\"0.0.83\", v0.0.60]\n"), versionedRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Targets[0].Resolved, []string{"0.0.60", "0.0.83"}) {
		t.Fatalf("resolved %v", m.Targets[0].Resolved)
	}
	if cells := m.Cells(); len(cells) != 2 || cells[0].Version != "0.0.60" {
		t.Fatalf("cells %+v", cells)
	}
}

func TestVersionErrors(t *testing.T) {
	const head = "targets:\n  - name: srt\n    versions: "
	cases := []struct{ name, yaml, want string }{
		{"bad selector", head + "[\"0.0.x!\"]\n", `m.yaml:3: targets[0].versions[0]: "0.0.x!" is not a version, a dist-tag, a range or last:N`},
		{"bad range", head + "\">=0.0.a\"\n", `m.yaml:3: targets[0].versions: range ">=0.0.a"`},
		{"empty list", head + "[]\n", "m.yaml:3: targets[0].versions: empty (expected a version, a dist-tag, a range, last:N"},
		{"last zero", head + "{last: 0}\n", "m.yaml:3: targets[0].versions.last: must be at least 1 (the newest N releases), got 0"},
		{"last text", head + "{last: few}\n", `m.yaml:3: targets[0].versions.last: expected a positive integer (the newest N releases), got "few"`},
		{"unknown key", head + "{first: 3}\n", "m.yaml:3: targets[0].versions.first: unknown key (expected one of: last)"},
		{"item mapping", head + "\n      - \"0.0.60\"\n      - {lats: 2}\n", "m.yaml:5: targets[0].versions[1].lats: unknown key (expected one of: last)"},
		{"null item", head + "[~]\n", "m.yaml:3: targets[0].versions[0]: expected a version, a dist-tag, a range, last:N, or a list of them"},
		{"not versioned", "targets:\n  - name: bwrap\n    versions: [\"0.8.0\"]\n", "m.yaml:3: targets[0].versions: bwrap comes from the host's packages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(c.yaml), versionedRegistry)
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n  %v\nwant it to contain:\n  %s", err, c.want)
			}
		})
	}
}

func TestResolveErrorsNameTheLine(t *testing.T) {
	doc := "targets:\n  - name: srt\n    versions:\n      - latest\n      - \"0.0.9\"\n      - \">=0.1.0\"\n"
	m, err := Parse("m.yaml", []byte(doc), versionedRegistry)
	if err != nil {
		t.Fatal(err)
	}
	err = m.ResolveVersions(resolveFrom(published))
	if err == nil {
		t.Fatal("unpublished versions resolved")
	}
	for _, want := range []string{
		"m.yaml:5: targets[0].versions[1]: 0.0.9 is not a published version of @anthropic-ai/sandbox-runtime (oldest: 0.0.58)",
		`m.yaml:6: targets[0].versions[2]: no release of @anthropic-ai/sandbox-runtime in ">=0.1.0"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n  %v\nwant it to contain:\n  %s", err, want)
		}
	}
}
