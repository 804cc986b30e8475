//go:build linux

package filesystem

import (
	"slices"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// The nesting class is the userns class's checks and the ptrace of a less confined process, under
// names of its own, each needing the weaker mode besides what it needed.
func TestNestingChecks(t *testing.T) {
	l := newFSInterplay(t.TempDir())
	var names []string
	for _, c := range l.nestingChecks("t") {
		names = append(names, c.Name)
		if c.Class != ClassNesting || !slices.Contains(c.Needs, model.CapWeakerNesting) {
			t.Errorf("%s: class %s, needs %v", c.Name, c.Class, c.Needs)
		}
	}
	want := []string{"userns-unmount-protected", "userns-unmount-deny-read", "userns-bind-protected", "userns-bind-deny-read",
		"userns-open-tree-protected", "userns-open-tree-deny-read", "ptrace-helper"}
	if !slices.Equal(names, want) {
		t.Errorf("nesting checks %v, want %v", names, want)
	}
	for _, c := range l.checks("t") {
		if c.Class == ClassNesting || slices.Contains(c.Needs, model.CapWeakerNesting) {
			t.Errorf("the fs-interplay session's own %s changed: %s %v", c.Name, c.Class, c.Needs)
		}
	}
}
