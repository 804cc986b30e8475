package knownfindings

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/sandcheck/sandcheck/targets/adapters" // every target's list
)

// anchor is a heading's anchor as GitHub makes it: lower case, spaces to '-', punctuation dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every finding's evidence in this repository names a file and a heading that exist: a source
// moved with its page must move with it.
func TestSourcesResolve(t *testing.T) {
	set, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`(?m)^#+\s+(.*)$`)
	checked := 0
	for _, l := range set {
		for _, f := range l.Findings {
			file, frag, ok := strings.Cut(f.Source, "#")
			if !ok || strings.Contains(file, "://") {
				continue
			}
			b, err := os.ReadFile(filepath.Join("..", file))
			if err != nil {
				t.Errorf("%s (%s): source %s: %v", f.ID, f.Pos, f.Source, err)
				continue
			}
			found := false
			for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
				found = found || anchor(strings.ReplaceAll(m[1], "`", "")) == frag
			}
			if !found {
				t.Errorf("%s (%s): source %s: %s has no heading #%s", f.ID, f.Pos, f.Source, file, frag)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d sources", checked)
	}
}
