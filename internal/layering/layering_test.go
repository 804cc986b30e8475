// Package layering keeps the layers of ../shared/DESIGN.md (Layout): imports point down, from
// the command through reports, the runner and the suites, to targets, fixtures and the matrix,
// to the shared vocabulary at the bottom. A package may import its own layer or any below it,
// never one above; model imports nothing but the standard library.
package layering

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/sandcheck/sandcheck"

// layers, top first: each entry is a package path prefix (relative to the module) and its layer.
// The longest matching prefix decides; a package matching none fails the test, so a new package
// has to say where it belongs.
var layers = []struct {
	prefix string
	layer  int
}{
	// 0: the binary and the tools around it; test helpers (no package but tests may import them).
	{"cmd/", 0}, {"scripts/", 0}, {"images/cmd/", 0}, {"internal/", 0}, {"e2e", 0},
	// 1: orchestration and judgement: reports, the runner and its host kinds, the suites (the
	// specs, the harness, the probe, classification) and the known findings they are judged by.
	{"reports/", 1}, {"runner", 1}, {"suites", 1}, {"knownfindings", 1}, {"doctor", 1},
	// 2: what the suites drive and set up, and what a run is made of: sandbox adapters,
	// fixtures, the matrix, container images.
	{"targets", 2}, {"fixtures/", 2}, {"matrix", 2}, {"images", 2},
	// 3: leaves that know nothing of sandcheck: versions, the environment, /proc, file locks.
	{"versions", 3}, {"config", 3}, {"internal/procfs", 3}, {"internal/flock", 3}, {"internal/shortlived", 3}, {"internal/netlink", 3},
	// 4: the vocabulary every layer shares.
	{"model", 4},
}

var names = []string{"command", "reports/runner/suites", "targets/fixtures/matrix", "leaves", "model"}

func layerOf(pkg string) (int, bool) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	best, layer := -1, 0
	for _, l := range layers {
		p := l.prefix
		if (rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, p) || strings.HasPrefix(rel, p+"/")) && len(p) > best {
			best, layer = len(p), l.layer
		}
	}
	return layer, best >= 0
}

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// packages lists every package of the module with its imports (not its tests'), on the
// platforms the binary is built for.
func packages(t *testing.T, goos string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", module+"/...")
	cmd.Env = append(cmd.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (GOOS=%s): %v", goos, err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func TestImportsPointDown(t *testing.T) {
	for _, goos := range []string{"linux", "windows"} {
		for _, p := range packages(t, goos) {
			from, ok := layerOf(p.ImportPath)
			if !ok {
				t.Errorf("%s: in no layer; add it to the table in this test", p.ImportPath)
				continue
			}
			for _, imp := range p.Imports {
				if !strings.HasPrefix(imp, module+"/") {
					continue
				}
				to, ok := layerOf(imp)
				if ok && to < from {
					t.Errorf("%s (%s) imports %s (%s): an import pointing up the layers (GOOS=%s)",
						p.ImportPath, names[from], imp, names[to], goos)
				}
			}
		}
	}
}

// model is the bottom: it imports the standard library only, so any package may use it.
func TestModelImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", module+"/model").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(l, " ")
		if std != "true" && path != module+"/model" {
			t.Errorf("model depends on %s: it may use the standard library only", path)
		}
	}
}

// The table itself: a prefix names an existing layer, and the test notices an upward import.
func TestLayerTable(t *testing.T) {
	for _, l := range layers {
		if l.layer < 0 || l.layer >= len(names) {
			t.Errorf("%s: layer %d has no name", l.prefix, l.layer)
		}
	}
	for pkg, want := range map[string]int{
		module + "/cmd/sandcheck": 0, module + "/internal/hosttest": 0, module + "/internal/procfs": 3,
		module + "/runner/hosts/ssh": 1, module + "/suites/probe": 1, module + "/targets/srt": 2,
		module + "/matrix": 2, module + "/model": 4, module + "/versions": 3,
	} {
		if got, ok := layerOf(pkg); !ok || got != want {
			t.Errorf("layerOf(%s) = %d %v, want %d", pkg, got, ok, want)
		}
	}
	if _, ok := layerOf(module + "/nowhere"); ok {
		t.Error("a package outside the table has a layer")
	}
}
