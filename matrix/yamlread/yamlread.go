// Package yamlread reads a YAML file as a user wrote it and collects every problem in it, each a
// FieldError that names file:line, the field and what was expected: a user fixing a file wants
// them all at once, not one per run. The matrix is read with it; its typed reads (strings,
// positive integers, durations, mappings of known keys, non-empty lists) are what any checked
// YAML file needs.
package yamlread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FieldError is one problem in a file.
type FieldError struct {
	File  string
	Line  int
	Field string // path such as hosts[1].profile; "" for the whole file
	Msg   string
	Err   error // the error of the check that refused the value, when there was one
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

func (e *FieldError) Unwrap() error { return e.Err }

// At is where a value was written, for what is found wrong with it after the file was read (a
// file it names that the sandbox's user cannot reach).
type At struct {
	File  string
	Line  int
	Field string
}

// String is "file:line: field", as a FieldError there begins.
func (a At) String() string { return fmt.Sprintf("%s:%d: %s", a.File, a.Line, a.Field) }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Document decodes data as exactly one YAML document: what names what the file holds ("matrix"),
// shape what it should look like, for the messages about an empty file or several documents.
// file names it in errors.
func Document(file string, data []byte, what, shape string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{File: file, Line: 1, Msg: "empty " + what + " (expected " + shape + ")"}
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &FieldError{File: file, Line: line, Msg: "invalid YAML: " + m[2], Err: err}
		}
		return nil, fmt.Errorf("%s: invalid YAML: %w", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if line == 0 {
			line = 1
		}
		return nil, &FieldError{File: file, Line: line, Msg: "more than one YAML document (expected exactly one " + what + ")"}
	}
	return &doc, nil
}

// Reader collects the problems of one file.
type Reader struct {
	File string
	errs []error
}

// Errorf records a problem with the value at n.
func (r *Reader) Errorf(n *yaml.Node, field, format string, args ...any) {
	r.errs = append(r.errs, &FieldError{File: r.File, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Refused records that a check refused the value at n, with the check's own error.
func (r *Reader) Refused(n *yaml.Node, field string, err error) {
	r.errs = append(r.errs, &FieldError{File: r.File, Line: n.Line, Field: field, Msg: err.Error(), Err: err})
}

// Err is every problem recorded, joined; nil when there was none.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// Resolve follows aliases to the node they stand for.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// Fields walks a mapping node, rejecting unknown and duplicate keys; it returns the values by key.
func (r *Reader) Fields(n *yaml.Node, field string, allowed []string, what string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		r.Errorf(n, field, "expected a mapping (%s), got %s", what, KindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], Resolve(n.Content[i+1])
		sub := Join(field, k.Value)
		switch {
		case k.Kind != yaml.ScalarNode:
			r.Errorf(k, field, "keys must be plain names")
		case !contains(allowed, k.Value):
			r.Errorf(k, sub, "unknown key (expected one of: %s)", strings.Join(allowed, ", "))
		case out[k.Value] != nil:
			r.Errorf(k, sub, "defined twice (first at line %d)", out[k.Value].Line)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// AnyFields is Fields without a list of allowed keys.
func AnyFields(n *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = Resolve(n.Content[i+1])
	}
	return out
}

// Item is one entry of a list, resolved, with its field name (field[i]).
type Item struct {
	Node  *yaml.Node
	Field string
	Index int
}

// List is the entries of a list that must not be empty: what describes the list ("a list of
// targets (- name: srt)"), empty what to write instead of an empty one.
func (r *Reader) List(n *yaml.Node, field, what, empty string) []Item {
	if n.Kind != yaml.SequenceNode {
		r.Errorf(n, field, "expected %s, got %s", what, KindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		r.Errorf(n, field, "empty (%s)", empty)
		return nil
	}
	items := make([]Item, len(n.Content))
	for i, item := range n.Content {
		items[i] = Item{Node: Resolve(item), Field: fmt.Sprintf("%s[%d]", field, i), Index: i}
	}
	return items
}

// Str is a scalar's text; what describes what was expected.
func (r *Reader) Str(n *yaml.Node, field, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.Errorf(n, field, "expected %s, got %s", what, Describe(n))
		return "", false
	}
	return n.Value, true
}

// PosInt is a whole number of at least 1.
func (r *Reader) PosInt(n *yaml.Node, field, what string) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		r.Errorf(n, field, "expected a positive integer (%s), got %s", what, Describe(n))
		return 0, false
	}
	if v <= 0 {
		r.Errorf(n, field, "must be at least 1 (%s), got %d", what, v)
		return 0, false
	}
	return v, true
}

// Duration is a positive Go duration (60s, 5m).
func (r *Reader) Duration(n *yaml.Node, field, what string) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.Errorf(n, field, "expected a duration like 60s or 5m (%s), got %s", what, Describe(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		r.Errorf(n, field, "expected a duration like 60s or 5m (%s), got %q", what, n.Value)
		return 0, false
	}
	if d <= 0 {
		r.Errorf(n, field, "must be positive (%s), got %s", what, n.Value)
		return 0, false
	}
	return d, true
}

// KindName says what a node is, for "got ..." in messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return Describe(n)
	default:
		return "nothing"
	}
}

// Describe is a node as a message quotes it: a scalar's value, quoted, else its kind.
func Describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "nothing"
	default:
		return strconv.Quote(n.Value)
	}
}

// Join is the field name of key within parent.
func Join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
