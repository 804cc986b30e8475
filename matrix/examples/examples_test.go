// The example matrices, read with the real registries: every target adapter, fault and host
// kind of the binary, so an example runs as written.
package examples_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/container"
	_ "github.com/sandcheck/sandcheck/runner/hosts/local"
	_ "github.com/sandcheck/sandcheck/runner/hosts/ssh"
	_ "github.com/sandcheck/sandcheck/runner/hosts/vm"
	_ "github.com/sandcheck/sandcheck/runner/hosts/wsl"
	_ "github.com/sandcheck/sandcheck/runner/hosts/wsl2like"
	"github.com/sandcheck/sandcheck/suites"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/bwrap"
	_ "github.com/sandcheck/sandcheck/targets/claudecode"
	_ "github.com/sandcheck/sandcheck/targets/codex"
	_ "github.com/sandcheck/sandcheck/targets/command"
	_ "github.com/sandcheck/sandcheck/targets/firejail"
	_ "github.com/sandcheck/sandcheck/targets/srt"
)

// TestQualificationMatricesCoverEveryScenario: the release and nightly matrices feed the gate, and
// the gate can only judge what ran. Each must select every scenario the suites define, by the
// labels the catalogue reads from the specs (so a new scenario is covered or this test says so).
func TestQualificationMatricesCoverEveryScenario(t *testing.T) {
	all, err := suites.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, sc := range all {
		families[sc.Family] = true
	}
	for _, want := range []string{"bypass", "concurrency", "failclosed", "filesystem", "network", "untrusted"} {
		if !families[want] {
			t.Fatalf("the catalogue's families are %v, want %q among them", families, want)
		}
	}
	for _, f := range []string{"release.yaml", "nightly.yaml"} {
		m, err := matrix.Load(f, registry)
		if err != nil {
			t.Fatal(err)
		}
		match, err := types.ParseLabelFilter(m.Scenarios)
		if err != nil {
			t.Fatalf("%s: scenarios %q: %v", f, m.Scenarios, err)
		}
		for _, sc := range all {
			if !match(sc.Labels) {
				t.Errorf("%s: scenarios %q leaves out %s (labels %v)", f, m.Scenarios, sc.ID, sc.Labels)
			}
		}
	}
}

// registry is the binary's: the linked-in adapters, faults and host kinds.
var registry = matrix.Registry{
	Target: func(name string, _ map[string]any) error {
		if !slices.Contains(targets.Names(), name) {
			return fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(targets.Names(), ", "))
		}
		return nil
	},
	Fault:     func(spec string) error { _, _, err := faults.Parse(spec); return err },
	HostKinds: hosts.Matrix(),
}

func TestExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	if len(files) < 2 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		m, err := matrix.Load(f, registry)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(m.Cells()) == 0 {
			t.Fatalf("%s: no cells", f)
		}
	}
	m, err := matrix.Load("nightly.yaml", registry)
	if err != nil {
		t.Fatal(err)
	}
	// Fixed trials: the SPRT judges whole trials, so one deterministic known finding would stop
	// every cell before the other scenarios hold the trials the gate needs.
	if m.Adaptive != nil || m.Trials != 100 || len(m.Hosts) != 5 {
		t.Fatalf("nightly: adaptive = %+v trials=%d hosts=%d", m.Adaptive, m.Trials, len(m.Hosts))
	}
	if h, _ := m.Host("sid"); h.Settings.(container.Config).Profile != container.ProfileBwrapReady || h.Settings.(container.Config).PerTrial {
		t.Fatalf("sid = %+v", h)
	}
	if m.Parallel != 2 || m.Timeout != 120*time.Second || m.Scenarios != "" {
		t.Fatalf("m = %+v", m)
	}
	if tg, ok := m.Target("srt"); !ok || tg.Name != "srt" {
		t.Fatalf("target = %+v", tg)
	}
	m, err = matrix.Load("containers.yaml", registry)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.Host("bookworm-default")
	if c, _ := h.Settings.(container.Config); !ok || c.Profile != container.ProfileDockerDefault || !c.PerTrial || c.Image != "sandcheck/debian:bookworm" {
		t.Fatalf("host = %+v", h)
	}
	// The adaptive form the nightly used to show, parsed as a user would write it.
	m, err = matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\ntrials: {until: \"rate<=0.01 vs rate>=0.05\", alpha: 0.05, beta: 0.05, max: 2000}\n"), registry)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Adaptive
	if a == nil || a.P0 != 0.01 || a.P1 != 0.05 || a.Alpha != 0.05 || a.Beta != 0.05 || a.Max != 2000 || m.Trials != 2000 {
		t.Fatalf("adaptive = %+v trials=%d", a, m.Trials)
	}
}
