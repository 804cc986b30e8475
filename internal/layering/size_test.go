package layering

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes a newcomer can read: a package is one job, a file one part of it. The limits are the
// issue's "about 1,000 and 500 lines" with a little room, so a small addition does not force a
// split, but growth does.
const (
	maxPackageLines = 1050
	maxFileLines    = 550
)

// TestSizes fails on a package whose non-test Go files hold more than maxPackageLines lines, or
// a non-test Go file over maxFileLines: split it along a seam a reader would look for.
func TestSizes(t *testing.T) {
	out, err := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,IgnoredGoFiles", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath, Dir         string
			GoFiles, IgnoredGoFiles []string // the other platforms' files count too
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, f := range append(p.GoFiles, p.IgnoredGoFiles...) {
			if filepath.Ext(f) != ".go" || strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(b, []byte("\n"))
			total += n
			if n > maxFileLines {
				t.Errorf("%s/%s: %d lines, over %d: split the file", p.ImportPath, f, n, maxFileLines)
			}
		}
		if total > maxPackageLines {
			t.Errorf("%s: %d non-test lines, over %d: split the package", p.ImportPath, total, maxPackageLines)
		}
	}
}
