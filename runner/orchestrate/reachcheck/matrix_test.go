//go:build linux

package reachcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/matrix"
	_ "github.com/sandcheck/sandcheck/targets/bwrap"
)

// TestMatrixNamesTheField: a sandbox executable a matrix names (settings.path) that the local
// host's sandbox user cannot run refuses the run, in the matrix's file:line: field shape; the
// same given as --target-settings is named by the flag, as --target-path by that flag; as root
// the run goes on.
func TestMatrixNamesTheField(t *testing.T) {
	skip.UnlessRoot(t, "the sandbox's user is created and switched to as root")
	skip.UnlessTools(t, "Debian: apt-get install bubblewrap", "bwrap")
	private, err := os.MkdirTemp("/tmp", "sandcheck-orchestrate-reach-") // 0700, root's: as /root
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(private)
	bwrap := filepath.Join(private, "bwrap")
	if err := os.WriteFile(bwrap, []byte("#!/bin/sh\nexec bwrap \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := func(user string) []byte {
		return []byte("targets:\n  - name: bwrap\n    settings:\n      path: " + bwrap + "\nhosts:\n  - {name: local, kind: local, user: " + user + "}\n")
	}
	const system = "/usr/local/bin:/usr/bin:/bin"
	m, err := matrix.Parse("m.yaml", yaml("unprivileged"), matrix.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	err = Matrix(m, "", nil, system, &log)
	if want := "m.yaml:4: targets[0].settings.path: user sandcheck cannot run " + bwrap + ": " + private + " is mode 0700"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal: %v\nwant it to contain %q", err, want)
	}

	if err := Matrix(m, bwrap, nil, system, &log); err == nil || !strings.Contains(err.Error(), "--target-path: user sandcheck cannot run "+bwrap) {
		t.Errorf("named by --target-path: %v", err)
	}
	m.Targets[0].SettingsAt = nil // as --target-settings leaves it
	if err := Matrix(m, "", nil, system, &log); err == nil || !strings.Contains(err.Error(), "--target-settings path: user sandcheck cannot run "+bwrap) {
		t.Errorf("named by --target-settings: %v", err)
	}
	if m, err = matrix.Parse("m.yaml", yaml("root"), matrix.Registry{}); err != nil {
		t.Fatal(err)
	}
	if err := Matrix(m, "", nil, system, &log); err != nil || log.Len() > 0 {
		t.Errorf("as root: %v %q", err, log.String())
	}
}
