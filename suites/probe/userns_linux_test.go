package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary be the probe's user-namespace child too, as the sandcheck binary
// is (MaybeRun).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == usernsArg {
		os.Exit(usernsChild(os.Args[2]))
	}
	os.Exit(m.Run())
}

// TestUsernsCheckRunsInItsOwnNamespace: a check whose step is taken in a user namespace runs its
// operation in a child there and reports what the step did; where there is no mount to work on,
// the operation goes to the path as it is. Where no user namespace can be made, the operation is
// tried as the command and the report says so: never skipped.
func TestUsernsCheckRunsInItsOwnNamespace(t *testing.T) {
	for _, step := range []string{PrivUsernsUnmount, PrivUsernsBind, PrivUsernsOpenTree} {
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, []byte("before\n"), 0o644)
		res := runFS([]FSCheck{{Name: step, Op: OpAppend, Path: f, Content: "after\n", Privileged: step}})[0]
		got, _ := os.ReadFile(f)
		if !res.OK || string(got) != "before\nafter\n" || res.Name != step || res.Path != f {
			t.Errorf("%s: %+v, file %q", step, res, got)
		}
		if !strings.HasPrefix(res.Privileged, "in a user namespace of its own, as root there: ") && !strings.HasPrefix(res.Privileged, "no user namespace of its own") {
			t.Errorf("%s: the step's report %q", step, res.Privileged)
		}
	}
	// An error keeps its number across the child: the errno the classifier reads.
	res := runFS([]FSCheck{{Name: "missing", Op: OpRead, Path: filepath.Join(t.TempDir(), "none"), Privileged: PrivUsernsBind}})[0]
	if res.OK || res.Errno != "ENOENT" {
		t.Errorf("a missing file: %+v, want ENOENT", res)
	}
}
