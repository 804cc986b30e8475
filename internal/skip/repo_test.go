package skip

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const repoRoot = "../.."

// bareSkips lists, as file:line: name, every use of testing's Skip, Skipf or SkipNow in a Go
// source: a skip that does not go through this package, whose kind (tier, missing, not
// applicable) nobody chose, and which CI would let pass. Ginkgo's Skip (a spec's verdict, called
// unqualified or as ginkgo.Skip) is not a test's skip.
func bareSkips(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch sel.Sel.Name {
		case "Skip", "Skipf", "SkipNow":
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "ginkgo" {
				return true
			}
			found = append(found, fset.Position(sel.Pos()).String()+": "+sel.Sel.Name)
		}
		return true
	})
	return found, nil
}

func TestBareSkipsAreFound(t *testing.T) {
	const src = `package p

func f(t *testing.T, b *testing.B, tb testing.TB) {
	t.Skip("x")
	b.Skipf("%d", 1)
	defer tb.SkipNow()
	g := t.Skip
	skip.Tier(t, "a tier")
	skip.Missing(t, "a tool")
	ginkgo.Skip("a verdict")
	Skip("a verdict, dot-imported")
	_ = "t.Skip() in a string"
}
`
	got, err := bareSkips(token.NewFileSet(), "p.go", src)
	want := []string{"p.go:4:2: Skip", "p.go:5:2: Skipf", "p.go:6:8: SkipNow", "p.go:7:7: Skip"}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bareSkips = %q, %v\nwant %q", got, err, want)
	}
}

// TestNoBareSkips: every test of the repository skips through this package. Only skip.go itself
// calls testing's Skip.
func TestNoBareSkips(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == repoRoot:
			case strings.HasPrefix(name, "."), name == "node_modules", name == "out", name == "bin":
				return filepath.SkipDir // .git, .tools, build and run output
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || path == filepath.Join(repoRoot, "internal", "skip", "skip.go") {
			return nil
		}
		files++
		found, err := bareSkips(fset, path, nil)
		if err != nil {
			return err
		}
		for _, f := range found {
			t.Errorf("%s: skip through internal/skip (Tier, Missing, NotApplicable, UnlessRoot, ...), which says why and fails in CI where something is missing",
				strings.TrimPrefix(f, repoRoot+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned %d Go files under %s: not the repository", files, repoRoot)
	}
}

// TestCIRunsWithCITrue: wherever CI runs `make test`, $CI is true in the tests' environment, so
// a test that would skip for something missing fails there. .ci/run sets it; GitHub Actions sets
// it for every step, but sudo drops the environment, so a `sudo ... make test` step must keep it.
func TestCIRunsWithCITrue(t *testing.T) {
	run, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	setCI := regexp.MustCompile(`(?m)^export CI=true$`).FindIndex(run)
	makeTest := regexp.MustCompile(`(?m)^make test\b`).FindIndex(run)
	if makeTest == nil || setCI == nil || setCI[0] > makeTest[0] {
		t.Errorf(".ci/run: want `export CI=true` before `make test`:\n%s", run)
	}
	workflows, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.y*ml"))
	steps := 0
	for _, wf := range workflows {
		b, err := os.ReadFile(wf)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "make test") {
				continue
			}
			steps++
			if sudo := strings.Index(line, "sudo "); sudo >= 0 && !keepsCI(line[sudo:]) {
				t.Errorf("%s:%d: sudo drops $CI: add it to --preserve-env\n%s", filepath.Base(wf), i+1, line)
			}
		}
	}
	if steps == 0 {
		t.Errorf("no workflow under .github/workflows runs make test")
	}
}

// keepsCI says whether a sudo command line keeps $CI: -E, or a --preserve-env list naming it.
func keepsCI(sudo string) bool {
	for _, f := range strings.Fields(sudo) {
		if f == "-E" || f == "--preserve-env" {
			return true
		}
		if list, ok := strings.CutPrefix(f, "--preserve-env="); ok {
			for _, v := range strings.Split(list, ",") {
				if v == CIVar {
					return true
				}
			}
		}
	}
	return false
}
