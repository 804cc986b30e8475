//go:build linux

package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// TestOpenRefusesUnreachableShim: a trial that no command checked first (go test ./suites, a
// runner's trial on another host) refuses in Open: its scenarios fail, none passes.
func TestOpenRefusesUnreachableShim(t *testing.T) {
	skip.UnlessRoot(t, "the sandbox's user is created and switched to as root")
	private, err := os.MkdirTemp("/tmp", "sandcheck-open-reach-") // 0700, root's: as /root
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(private)
	if err := os.WriteFile(filepath.Join(private, "socat"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", private+":/usr/local/bin:/usr/bin:/bin")
	cfg := Config{Target: "command", TargetSettings: `{"argv":["sh","-c","{{.Command}}"]}`, User: model.UserUnprivileged, WorkDir: "/tmp", Hostnames: "name"}
	tr, err := Open(t.Context(), cfg, Options{})
	if err == nil {
		tr.Close()
		t.Fatal("Open: a socat shim the sandbox's user cannot reach was not refused")
	}
	if !strings.Contains(err.Error(), "PATH entry 1, "+private) {
		t.Errorf("Open: %v", err)
	}
	cfg.User = model.UserRoot
	tr, err = Open(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatalf("Open as root: %v", err)
	}
	tr.Close()
}
