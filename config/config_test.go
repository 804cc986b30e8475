package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const root = ".."

var sandcheckVar = regexp.MustCompile(`\bSANDCHECK_[A-Z0-9_]*[A-Z0-9]\b`)

func documented() map[string]Var {
	m := map[string]Var{}
	for _, v := range Vars {
		m[v.Name] = v
	}
	return m
}

// goFiles walks the repository's Go files (not the tools' or the library's).
func goFiles(t *testing.T, visit func(path string, src []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".tools" || d.Name() == "node_modules" || d.Name() == "out" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			visit(p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every SANDCHECK_ name the code (tests included) mentions is documented here, once.
func TestEveryVariableIsDocumented(t *testing.T) {
	doc := documented()
	if len(doc) != len(Vars) {
		t.Fatal("a variable is listed twice in Vars")
	}
	seen := map[string]bool{}
	goFiles(t, func(p string, src []byte) {
		for _, name := range sandcheckVar.FindAllString(string(src), -1) {
			seen[name] = true
			if _, ok := doc[name]; !ok {
				t.Errorf("%s: %s is not in config.Vars (say what it means and who sets it)", p, name)
			}
		}
	})
	for _, v := range Vars {
		if !seen[v.Name] {
			t.Errorf("%s is documented but nothing mentions it", v.Name)
		}
	}
}

// No package but this one reads an override or a trial setting itself: a literal SANDCHECK_
// name handed to os.Getenv or os.LookupEnv outside config must be a marker or a test knob.
func TestOnlyConfigReadsSettings(t *testing.T) {
	doc := documented()
	goFiles(t, func(p string, src []byte) {
		if filepath.Dir(p) == "." {
			return // this package
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, isIdent := sel.X.(*ast.Ident); !isIdent || x.Name != "os" || !slices.Contains([]string{"Getenv", "LookupEnv"}, sel.Sel.Name) {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				if id, isID := call.Args[0].(*ast.Ident); isID && strings.HasPrefix(id.Name, "Env") {
					t.Errorf("%s: os.%s(%s): read it through config.Get()", p, sel.Sel.Name, id.Name)
				}
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			if v, ok := doc[name]; ok && (v.Kind == Override || v.Kind == Trial) {
				t.Errorf("%s: os.%s(%q): read it through config.Get()", p, sel.Sel.Name, name)
			}
			return true
		})
	})
}

// docs/configuration.md's table of variables is this package's.
func TestDocsListTheVariables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(SANDCHECK_[A-Z0-9_]+)` \\| (\\w+) \\|")
	inDocs := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		inDocs[m[1]] = m[2]
	}
	for _, v := range Vars {
		if k, ok := inDocs[v.Name]; !ok || k != string(v.Kind) {
			t.Errorf("docs/configuration.md's table of environment variables: %s should be a row of kind %s (has %q)", v.Name, v.Kind, k)
		}
		delete(inDocs, v.Name)
	}
	for n := range inDocs {
		t.Errorf("docs/configuration.md lists %s, which config.Vars does not", n)
	}
}

// Get reads once; Set and With replace what it returns until restored.
func TestReadOnce(t *testing.T) {
	e := read(func(k string) string {
		return map[string]string{PassEnv: "A, B,", VMLog: "1", Keep: "0", DockerDebug: "x"}[k]
	})
	if !slices.Equal(e.PassEnv, []string{"A", "B"}) || !e.VMLog || e.Keep || !e.DockerDebug {
		t.Fatalf("read: %+v", e)
	}
	before := Get()
	restore := With(func(e *Env) { e.SRT = "/x/srt" })
	if Get().SRT != "/x/srt" || Get().Tool(SRT) != "/x/srt" {
		t.Fatalf("With: %+v", Get())
	}
	restore()
	if Get().SRT != before.SRT {
		t.Fatal("restore did not restore")
	}
}
