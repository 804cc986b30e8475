package matrix

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/fixtures/faults"
)

// topLabel finds the label of each top-level Describe in the spec files: the scenario families.
var topLabel = regexp.MustCompile(`(?m)^var _ = Describe\("[^"]*",.*\bLabel\("([^"]+)"`)

// TestQualificationMatricesCoverEveryScenario: the release and nightly matrices feed the gate, and
// the gate can only judge what ran. Each must select every scenario family the suites define
// (read from the spec files, so a new family is covered or this test says so).
func TestQualificationMatricesCoverEveryScenario(t *testing.T) {
	specs, err := filepath.Glob("../suites/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var families []string
	for _, f := range specs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range topLabel.FindAllSubmatch(b, -1) {
			families = append(families, string(m[1]))
		}
	}
	slices.Sort(families)
	for _, want := range []string{"concurrency", "failclosed", "filesystem", "network", "untrusted"} {
		if !slices.Contains(families, want) {
			t.Fatalf("scenario families read from suites/*.go = %v, want %q among them (did the Describe shape change?)", families, want)
		}
	}
	reg := testRegistry
	reg.Fault = func(spec string) error { _, _, err := faults.Parse(spec); return err }
	for _, f := range []string{"examples/release.yaml", "examples/nightly.yaml"} {
		m, err := Load(f, reg)
		if err != nil {
			t.Fatal(err)
		}
		match, err := types.ParseLabelFilter(m.Scenarios)
		if err != nil {
			t.Fatalf("%s: scenarios %q: %v", f, m.Scenarios, err)
		}
		for _, fam := range families {
			if !match([]string{fam}) {
				t.Errorf("%s: scenarios %q leaves out the %s scenarios", f, m.Scenarios, fam)
			}
		}
	}
}
