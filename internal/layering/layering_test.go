// Package layering keeps sandcheck's layers (README, Layout) as rules per
// directory, in the manner of Kubernetes' .import-restrictions: each directory says which of
// sandcheck's packages its packages may import, and which packages (of ours or not) must not be
// among their dependencies at all, however indirectly. Imports point down: the command, then
// reports / the runner / the suites, then targets, fixtures and the matrix, then the leaves and
// the vocabulary (model) with the wire formats (wire/) at the bottom.
package layering

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sandcheck/sandcheck"

// rule is what the packages under dir may import of ours (may: module-relative prefixes) and
// what none of their dependencies may be (never: module-relative prefixes, or full paths of
// other modules). The longest matching dir decides; a package no rule matches fails the test, so
// a new directory has to say where it belongs.
type rule struct {
	dir   string
	may   []string
	never []string
	why   string
}

// Groups of prefixes the rules share.
var (
	leaves    = []string{"model", "wire/", "versions", "config", "internal/procfs", "internal/flock", "internal/shortlived", "internal/netlink"}
	ginkgo    = []string{"github.com/onsi/ginkgo", "github.com/onsi/gomega"}
	aboveRuns = []string{"cmd/", "suites", "fixtures/", "targets", "knownfindings", "doctor", "images"}
)

func join(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var rules = []rule{
	{dir: "model", why: "the vocabulary every layer shares: the standard library only"},
	{dir: "wire/", may: []string{"model", "wire/"}, why: "what crosses a process or a file: the trial frames and the journal, in model's words"},
	{dir: "versions", why: "a leaf"}, {dir: "config", why: "a leaf: the environment, read once"},
	{dir: "internal/procfs", why: "a leaf"}, {dir: "internal/flock", why: "a leaf"},
	{dir: "internal/shortlived", why: "a leaf"}, {dir: "internal/netlink", why: "a leaf"},

	// Reports read the report model, the journal and nothing of how trials are made.
	{dir: "reports/", may: []string{"model", "wire/journal", "reports/", "versions"},
		never: join([]string{"suites", "fixtures/", "targets", "runner", "knownfindings", "config", "cmd/"}, ginkgo),
		why:   "reports read only model and the journal's wire format"},

	// The runner's result path: scheduling, deadlines, the journal, reading a trial's frames.
	{dir: "runner", may: join(leaves, []string{"runner", "matrix", "reports/stats"}),
		never: join(aboveRuns, ginkgo, []string{"reports/aggregate", "reports/format"}),
		why:   "the runner's result path knows no Ginkgo, no fixtures, no specs"},
	{dir: "runner/trialresult", may: []string{"model", "wire/", "runner"}, never: join(aboveRuns, ginkgo),
		why: "a trial's result is read from its frames, without the specs that made them"},
	// Where a run is wired together from its parts: adapters, faults, hosts and reports.
	{dir: "runner/orchestrate", may: join(leaves, []string{"runner", "matrix", "reports/", "targets", "fixtures/", "images"}),
		never: join([]string{"suites", "cmd/", "knownfindings"}, ginkgo), why: "a run's wiring: no specs"},
	{dir: "runner/hosts", may: join(leaves, []string{"runner", "matrix", "fixtures/users", "targets/npmcache", "images"}),
		never: join([]string{"suites", "cmd/", "knownfindings", "reports/"}, ginkgo), why: "where a trial runs, not what it checks"},

	// Known findings live with their targets and are judged against model's breaches.
	{dir: "knownfindings", may: join(leaves, []string{"targets"}), never: join([]string{"suites", "runner", "reports/", "cmd/", "fixtures/"}, ginkgo),
		why: "known findings import no suites"},

	// The specs and everything they drive.
	{dir: "suites", may: join(leaves, []string{"suites", "targets", "fixtures/", "knownfindings", "doctor"}),
		never: []string{"cmd/", "runner", "reports/"}, why: "specs run trials; they do not schedule or report them"},
	{dir: "targets", may: join(leaves, []string{"targets", "fixtures/scriptedmodel"}),
		never: join([]string{"suites", "runner", "reports/", "knownfindings", "cmd/"}, ginkgo), why: "an adapter is what differs about one sandbox"},
	{dir: "fixtures/", may: join(leaves, []string{"fixtures/", "targets"}),
		never: join([]string{"suites", "runner", "reports/", "knownfindings", "cmd/"}, ginkgo), why: "fixtures set up what trials need"},
	{dir: "matrix", may: join(leaves, []string{"matrix"}), never: join([]string{"suites", "runner", "reports/", "targets", "fixtures/", "cmd/"}, ginkgo),
		why: "the matrix is a file format"},
	{dir: "doctor", may: join(leaves, []string{"targets", "fixtures/users"}), never: join([]string{"suites", "runner", "reports/", "cmd/"}, ginkgo),
		why: "the host's fingerprint"},
	{dir: "images", may: join(leaves, []string{"images"}), never: join([]string{"suites", "runner", "reports/", "cmd/"}, ginkgo), why: "images are built from Debian packages"},

	// The binary, and what only tests and tools use: anything below, but nothing imports cmd.
	{dir: "cmd/", may: []string{""}, why: "the one binary"},
	{dir: "images/cmd/", may: []string{"images"}, why: "a tool"},
	{dir: "scripts/", may: []string{""}, never: []string{"cmd/"}, why: "tools"},
	{dir: "e2e", may: []string{""}, never: []string{"cmd/"}, why: "end-to-end tests"},
	{dir: "internal/", may: []string{""}, never: []string{"cmd/"}, why: "test helpers"},
}

// ruleOf is the rule of the longest dir that matches a module-relative package path.
func ruleOf(rel string) (rule, bool) {
	best := -1
	var r rule
	for _, x := range rules {
		if matches(rel, x.dir) && len(x.dir) > best {
			best, r = len(x.dir), x
		}
	}
	return r, best >= 0
}

// matches says whether a path (module-relative, or the full path of another module's package)
// is prefix itself or under it; "" matches everything of ours.
func matches(path, prefix string) bool {
	if prefix == "" {
		return true
	}
	p := strings.TrimSuffix(prefix, "/")
	return path == p || strings.HasPrefix(path, p+"/")
}

func rel(pkg string) string { return strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/") }

type pkg struct {
	ImportPath    string
	Imports, Deps []string
}

// packages lists every package of the module with its imports and dependencies (not its
// tests'), on the platforms the binary is built for.
func packages(t *testing.T, goos string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps", module+"/...")
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

// violations checks one package against its rule: every import of ours allowed, no dependency
// forbidden.
func violations(p pkg) []string {
	from := rel(p.ImportPath)
	r, ok := ruleOf(from)
	if !ok {
		return []string{fmt.Sprintf("%s: no rule names its directory; add one to the table in this test", from)}
	}
	var out []string
	for _, imp := range p.Imports {
		if !strings.HasPrefix(imp, module+"/") {
			if slices.ContainsFunc(r.never, func(n string) bool { return matches(imp, n) }) {
				out = append(out, fmt.Sprintf("%s imports %s: %s", from, imp, r.why))
			}
			continue
		}
		to := rel(imp)
		if matches(to, "cmd/") && !matches(from, "cmd/") {
			out = append(out, fmt.Sprintf("%s imports %s: nothing imports the command", from, to))
			continue
		}
		if matches(to, from) {
			continue // its own subpackages
		}
		if !slices.ContainsFunc(r.may, func(m string) bool { return matches(to, m) }) {
			out = append(out, fmt.Sprintf("%s imports %s, which its rule (%s) does not allow: %s", from, to, r.dir, r.why))
		}
	}
	for _, dep := range p.Deps {
		d := dep
		if strings.HasPrefix(dep, module+"/") {
			d = rel(dep)
		}
		if i := slices.IndexFunc(r.never, func(n string) bool { return matches(d, n) }); i >= 0 {
			out = append(out, fmt.Sprintf("%s depends on %s (through its imports): %s", from, d, r.why))
		}
	}
	return out
}

func TestRulesPerDirectory(t *testing.T) {
	for _, goos := range []string{"linux", "windows"} {
		for _, p := range packages(t, goos) {
			for _, v := range violations(p) {
				t.Errorf("%s (GOOS=%s)", v, goos)
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

// The rules must be able to fail: each wrong-way edge the layering exists to forbid is reported
// when it is (re)introduced, as the review that wrote these rules found them on the old tree.
func TestRulesCatchWrongWayImports(t *testing.T) {
	for _, c := range []struct {
		from, imp string
		deps      []string
	}{
		{"runner/trialresult", "suites/specreport", []string{"github.com/onsi/ginkgo/v2"}},
		{"runner/trialresult", "fixtures/nethost", nil},
		{"reports/runsummary", "knownfindings", nil},
		{"reports/runsummary", "fixtures/users", nil},
		{"reports/versiontable", "targets", nil},
		{"knownfindings", "suites/classify", nil},
		{"runner/preflight", "suites/harness", nil},
		{"model", "versions", nil},
		{"wire/journal", "runner", nil},
		{"suites/judge", "cmd/sandcheck", nil},
		{"reports/gate", "model", []string{module + "/fixtures/nethost/netns"}}, // indirectly
	} {
		p := pkg{ImportPath: module + "/" + c.from, Imports: []string{module + "/" + c.imp}, Deps: append([]string{module + "/" + c.imp}, c.deps...)}
		if len(violations(p)) == 0 {
			t.Errorf("%s importing %s passes the rules", c.from, c.imp)
		}
	}
	// And the edges the design wants pass.
	for _, c := range []struct{ from, imp string }{
		{"reports/gate", "model"}, {"reports/load", "wire/journal"}, {"runner/trialresult", "wire/frame"},
		{"suites/judge", "knownfindings"}, {"knownfindings", "targets"}, {"cmd/sandcheck", "suites/harness"},
	} {
		p := pkg{ImportPath: module + "/" + c.from, Imports: []string{module + "/" + c.imp}, Deps: []string{module + "/" + c.imp}}
		if v := violations(p); len(v) > 0 {
			t.Errorf("%s importing %s: %v", c.from, c.imp, v)
		}
	}
}
