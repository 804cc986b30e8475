//go:build linux

package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites"
	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/targets"
)

// specKey names a spec by what both the spec tree and the catalogue know of it: its own text
// and every label it carries.
func specKey(text string, labels []string) string {
	ls := slices.Clone(labels)
	sort.Strings(ls)
	return text + " [" + strings.Join(ls, ", ") + "]"
}

// previewKeys walks the compiled specs with Ginkgo's dry run (nothing runs, no sandbox starts)
// and counts the keys of the specs a label filter selects ("" all of them).
func previewKeys(t *testing.T, filter string) map[string]int {
	t.Helper()
	sc, _ := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = filter
	report := ginkgo.PreviewSpecs("sandcheck", sc)
	keys := map[string]int{}
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || s.State != types.SpecStatePassed {
			continue // filtered out (skipped), or a suite node
		}
		keys[specKey(s.LeafNodeText, s.Labels())]++
	}
	if len(keys) == 0 {
		t.Fatalf("Ginkgo's dry run (label filter %q) reported no spec", filter)
	}
	return keys
}

func catalogueKeys(scs []catalog.Scenario) map[string]int {
	keys := map[string]int{}
	for _, sc := range scs {
		keys[specKey(sc.Spec, sc.Labels)]++
	}
	return keys
}

// diffKeys lists what one side has more of than the other.
func diffKeys(a, b map[string]int) []string {
	var out []string
	for k, n := range a {
		if b[k] < n {
			out = append(out, fmt.Sprintf("%s (%d against %d)", k, n, b[k]))
		}
	}
	sort.Strings(out)
	return out
}

func catalogue(t *testing.T) []catalog.Scenario {
	t.Helper()
	scs, err := suites.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// The catalogue can never drift from the specs: every spec Ginkgo's dry run walks has exactly
// one catalogue entry with its text and labels, and every entry is such a spec.
func TestCatalogueMatchesTheSpecs(t *testing.T) {
	scs := catalogue(t)
	specs, cat := previewKeys(t, ""), catalogueKeys(scs)
	for _, k := range diffKeys(specs, cat) {
		t.Errorf("spec without a catalogue entry (add it to its family's Catalogue): %s", k)
	}
	for _, k := range diffKeys(cat, specs) {
		t.Errorf("catalogue entry without its spec: %s", k)
	}
	// Each key names one spec, so each spec has one id.
	for k, n := range cat {
		if n > 1 {
			t.Errorf("%d catalogue entries share text and labels %s: give their specs distinct texts", n, k)
		}
	}
	ids := map[string]bool{}
	for _, sc := range scs {
		if ids[sc.ID] {
			t.Errorf("scenario id %s listed twice", sc.ID)
		}
		ids[sc.ID] = true
		if sc.What == "" || sc.Family == "" || len(sc.Labels) == 0 {
			t.Errorf("%s: what, family and labels must be set: %+v", sc.ID, sc)
		}
	}
	if len(scs) < 150 {
		t.Errorf("only %d scenarios in the catalogue", len(scs))
	}
}

// --label-filter selects in the catalogue what it selects among the specs when run takes it.
func TestListLabelFilterSelectsAsRunDoes(t *testing.T) {
	scs := catalogue(t)
	for _, filter := range []string{"network", "seed", "bypass-matching", "fs-secret || claude-trust", "seed && !claude-settings",
		"failclosed-socat-missing", "bypass && !bypass-fs-interplay"} {
		got, err := selectScenarios(scs, filter)
		if err != nil {
			t.Fatal(err)
		}
		specs, cat := previewKeys(t, filter), catalogueKeys(got)
		if d := append(diffKeys(specs, cat), diffKeys(cat, specs)...); len(d) > 0 {
			t.Errorf("--label-filter %q: the catalogue and the specs differ on %v", filter, d)
		}
	}
	if _, err := selectScenarios(scs, "network &&"); err == nil {
		t.Error("a malformed filter was accepted")
	}
}

// What the catalogue declares is real: every known-bad is a fault --fault takes, on a target
// there is; every aggregate a family declares and every scenario a known finding is pinned to is
// in the catalogue (a finding pinned to no scenario would never match again).
func TestCatalogueNamesWhatExists(t *testing.T) {
	scs := catalogue(t)
	ids := map[string]catalog.Scenario{}
	for _, sc := range scs {
		ids[sc.ID] = sc
		for _, kb := range sc.KnownBads {
			if _, _, err := faults.Parse(kb.Fault); kb.Release == "" && err != nil {
				t.Errorf("%s: known-bad %s: %v", sc.ID, kb, err)
			}
			// A release names its target and no fault, and its fix; or none, where it is still
			// open: a known finding of that target pinned to the scenario says so.
			open := slices.ContainsFunc(sc.Findings, func(f catalog.Finding) bool { return f.Target == kb.Target })
			if kb.Release != "" && (kb.Fault != "" || kb.Target == "" || kb.Fixed == "" && !open) {
				t.Errorf("%s: known-bad %s: a release names its target and its fix (or a known finding that it is open), and no fault", sc.ID, kb)
			}
			if kb.Target != "" && !slices.Contains(targets.Names(), kb.Target) {
				t.Errorf("%s: known-bad %s: no target %s", sc.ID, kb, kb.Target)
			}
		}
	}
	for _, a := range knownfindings.Aggregates() {
		if sc, ok := ids[a]; !ok || !sc.Aggregate {
			t.Errorf("aggregate %s: not in the catalogue as one", a)
		}
	}
	set, err := knownfindings.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range set {
		for _, f := range l.Findings {
			if _, ok := ids[f.Scenario]; !ok {
				t.Errorf("%s (%s): pinned to %s, which no spec judges", f.ID, f.Pos, f.Scenario)
			}
		}
	}
	// Spot checks of each column, against what the families' tables say.
	want := map[string]func(catalog.Scenario) bool{
		"network/seed":        func(s catalog.Scenario) bool { return s.Aggregate && len(s.KnownBads) > 5 },
		"network/proxy-alive": func(s catalog.Scenario) bool { return s.Needs.String() == "proxy-allow-list" },
		"bypass/matching/nul": func(s catalog.Scenario) bool {
			return s.Needs.AllowList && s.KnownBads[0].String() == "bad-proxy on srt: non-enforcing"
		},
		"bypass/ports/other-port-http": func(s catalog.Scenario) bool { return s.Needs.String() == "port-rules, an allow-list (not deny-all)" },
		"filesystem/secret/read": func(s catalog.Scenario) bool {
			return s.Needs.String() == "deny-read" && s.KnownBads[0].Fault == "fs-drop-deny-read"
		},
		"failclosed/socat-missing":   func(s catalog.Scenario) bool { return s.Condition == "socat-missing" && len(s.Needs.Seams) == 1 },
		"claude-settings/seed-repro": func(s catalog.Scenario) bool { return s.Needs.Target == "claude-code" && len(s.KnownBads) == 0 },
		"filesystem/workspace/tmpdir": func(s catalog.Scenario) bool {
			return slices.ContainsFunc(s.Findings, func(f catalog.Finding) bool { return f.Target == "srt" })
		},
		"bypass/fs-interplay/deny-read-and-write": func(s catalog.Scenario) bool {
			return s.Needs.String() == "deny-read, deny-write"
		},
	}
	for id, ok := range want {
		if sc, found := ids[id]; !found || !ok(sc) {
			j, _ := json.Marshal(sc)
			t.Errorf("%s: %s", id, j)
		}
	}
}

// docsPath is docs/scenarios.md, from this package's directory.
var docsPath = filepath.Join("..", "..", "..", "..", "docs", "scenarios.md")

// docs/scenarios.md is what `sandcheck list --markdown` prints now: a scenario added, renamed or
// given a known-bad or finding without `make scenarios-doc` fails here.
func TestScenariosDocIsCurrent(t *testing.T) {
	var now bytes.Buffer
	if code := listCmd([]string{"--markdown"}, &now, os.Stderr); code != 0 {
		t.Fatalf("sandcheck list --markdown: exit %d", code)
	}
	committed, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("%v: run make scenarios-doc", err)
	}
	if d := firstDifference(string(committed), now.String()); d != "" {
		if k := os.Getenv(config.Concurrency); k != "" {
			d += fmt.Sprintf("\n(%s=%s is set: the concurrency ids carry it; the file has the default, 4)", config.Concurrency, k)
		}
		t.Errorf("docs/scenarios.md is stale (run make scenarios-doc): %s", d)
	}
}

// firstDifference says where two texts first differ, by line; "" when they are the same.
func firstDifference(a, b string) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d is\n  %q\nbut the command prints\n  %q", i+1, x, y)
		}
	}
	return "they differ in line endings"
}

func TestListOutputs(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := listCmd([]string{"--label-filter", "bypass-tty"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "bypass/tty/tiocsti") || strings.Contains(out.String(), "network/seed") {
		t.Errorf("table for bypass-tty:\n%s", out.String())
	}
	out.Reset()
	if code := listCmd([]string{"--json", "--label-filter", "failclosed-socat-missing"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var scs []catalog.Scenario
	if err := json.Unmarshal(out.Bytes(), &scs); err != nil || len(scs) != 1 || scs[0].ID != "failclosed/socat-missing" {
		t.Errorf("--json: %v %s", err, out.String())
	}
	if code := listCmd([]string{"--json", "--markdown"}, &out, &errOut); code != 2 {
		t.Errorf("--json --markdown: exit %d, want 2", code)
	}
	if code := listCmd([]string{"--label-filter", "a &&"}, &out, &errOut); code != 2 {
		t.Errorf("a malformed filter: exit %d, want 2", code)
	}
}
