package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestLeftoverCheckSeesANewKind: the leftover check after every test blames whatever is new in
// the places a trial can write, by any name (here one no sandbox uses), a left directory as one
// line, a new entry of the root directory too, and nothing once it is gone;
// SANDCHECK_LEFTOVERS_IGNORE's globs are not blamed.
func TestLeftoverCheckSeesANewKind(t *testing.T) {
	skip.UnlessRoot(t, "the leftover check looks as root only")
	tree, err := os.MkdirTemp("/tmp", "unknown-kind-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tree)
	deep := filepath.Join(tree, "per-project", "session")
	os.MkdirAll(deep, 0o755)
	os.WriteFile(filepath.Join(deep, "state"), nil, 0o644)
	file := tree + ".sock"
	os.WriteFile(file, nil, 0o644)
	defer os.Remove(file)

	root, err := os.MkdirTemp("/", "sandcheck-unknown-kind-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)

	left := newLeftovers()
	for _, want := range []string{"left in /tmp: " + tree, "left in /tmp: " + file, "left in /: " + root} {
		if !slices.Contains(left, want) {
			t.Errorf("%q not blamed: %q", want, left)
		}
	}
	for _, l := range left {
		if strings.Contains(l, filepath.Join(tree, "per-project")) {
			t.Errorf("a left directory's contents are blamed apart from it: %s", l)
		}
	}
	t.Setenv("SANDCHECK_LEFTOVERS_IGNORE", "/tmp/unknown-kind-*")
	for _, l := range newLeftovers() {
		if strings.Contains(l, tree) {
			t.Errorf("ignored, yet blamed: %s", l)
		}
	}
	t.Setenv("SANDCHECK_LEFTOVERS_IGNORE", "")
	os.RemoveAll(tree)
	os.Remove(file)
	os.RemoveAll(root)
	for _, l := range newLeftovers() {
		if strings.Contains(l, tree) || strings.Contains(l, root) {
			t.Errorf("gone, yet blamed: %s", l)
		}
	}
}
