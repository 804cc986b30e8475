//go:build linux

package agreement

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/adversarial.md names, for every way a fail-open could be read as a pass, the test that
// holds it: each named test must exist, so the table cannot point at a test that was renamed or
// deleted.
func TestAdversarialTableNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("../../docs/adversarial.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".tools" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`\b(Test[A-Z]\w+)\b`).FindAllString(string(doc), -1)
	if len(named) < 20 {
		t.Fatalf("the table names %d tests; it lists far more ways", len(named))
	}
	for _, n := range named {
		if !defined[n] {
			t.Errorf("docs/adversarial.md names %s, which no test defines", n)
		}
	}
}
