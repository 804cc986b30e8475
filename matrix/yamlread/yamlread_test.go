package yamlread

import (
	"errors"
	"strings"
	"testing"
)

func TestDocument(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", "f.yaml:1: empty thing (expected a mapping)"},
		{"a: [1,\n", "f.yaml:1: invalid YAML: "},
		{"a: 1\n---\nb: 2\n", "f.yaml:2: more than one YAML document (expected exactly one thing)"},
	} {
		_, err := Document("f.yaml", []byte(c.data), "thing", "a mapping")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Document(%q) = %v, want %q...", c.data, err, c.want)
		}
	}
}

// Every problem is kept, each at its line with its field; the first is a FieldError.
func TestReaderCollectsEveryProblem(t *testing.T) {
	doc, err := Document("f.yaml", []byte("n: -1\nd: soon\nl: []\nx: 1\n"), "thing", "a mapping")
	if err != nil {
		t.Fatal(err)
	}
	r := &Reader{File: "f.yaml"}
	f := r.Fields(doc.Content[0], "", []string{"n", "d", "l"}, "n, d, l")
	r.PosInt(f["n"], "n", "a count")
	r.Duration(f["d"], "d", "a wait")
	r.List(f["l"], "l", "a list of names", "expected at least one name")
	err = r.Err()
	want := []string{
		"f.yaml:4: x: unknown key (expected one of: n, d, l)",
		"f.yaml:1: n: must be at least 1 (a count), got -1",
		`f.yaml:2: d: expected a duration like 60s or 5m (a wait), got "soon"`,
		"f.yaml:3: l: empty (expected at least one name)",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("errors:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Line != 4 || fe.Field != "x" {
		t.Fatalf("first FieldError = %+v", fe)
	}
}
