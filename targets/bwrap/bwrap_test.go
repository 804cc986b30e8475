package bwrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// TestRealBwrap runs a command under the real bubblewrap with the adapter's arguments: the
// workspace is writable, the rest of the filesystem is not, the denied directory and file are
// hidden, and the network namespace is not the host's.
func TestRealBwrap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		skip.Missing(t, "bwrap not installed (run `make deps`)")
	}
	skip.UnlessRoot(t, "bwrap --unshare-all as an unprivileged user needs user namespaces")
	tg, err := targets.New(Name, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if !targets.DenyAll(tg) || !targets.Has(tg, model.CapDenyRead) || targets.Has(tg, model.CapProxyAllowList) {
		t.Errorf("capabilities %v, reach %v: want deny-all with deny-read, no proxy", tg.Capabilities(), tg.Reach())
	}
	if !strings.Contains(tg.Version(), "bubblewrap") {
		t.Errorf("version %q", tg.Version())
	}
	dir := t.TempDir()
	ws, secretDir, secretFile := filepath.Join(dir, "ws"), filepath.Join(dir, "secret"), filepath.Join(dir, "key")
	for _, d := range []string{ws, secretDir} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(secretDir, "id"), []byte("canary-dir"), 0o644)
	os.WriteFile(secretFile, []byte("canary-file"), 0o644)
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	script := `readlink /proc/self/ns/net; echo hi > ok && echo WROTE; echo x > /etc/sandcheck-bwrap-test 2>/dev/null && echo ESCAPED-ETC;
echo x > ` + filepath.Join(dir, "outside") + ` 2>/dev/null && echo ESCAPED-PARENT; cat ` + filepath.Join(secretDir, "id") + ` ` + secretFile + ` 2>/dev/null; echo TMPDIR=$TMPDIR`
	s := &targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(), Command: []string{"sh", "-c", script},
		Policy: targets.Policy{WritablePaths: []string{ws}, DenyRead: []string{secretDir, secretFile}}}
	inv, err := tg.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env, cmd.Dir = inv.Env, inv.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", inv.Argv, err, out)
	}
	o := string(out)
	t.Logf("argv %q\n%s", inv.Argv, o)
	if strings.Contains(o, hostNet) || !strings.Contains(o, "net:[") {
		t.Errorf("network namespace is the host's (%s):\n%s", hostNet, o)
	}
	for _, bad := range []string{"ESCAPED", "canary"} {
		if strings.Contains(o, bad) {
			t.Errorf("saw %q:\n%s", bad, o)
		}
	}
	if !strings.Contains(o, "WROTE") || !strings.Contains(o, "TMPDIR=/tmp") {
		t.Errorf("workspace write or TMPDIR missing:\n%s", o)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "ok")); err != nil || string(b) != "hi\n" {
		t.Errorf("workspace write did not reach the host: %q %v", b, err)
	}
	os.Remove("/etc/sandcheck-bwrap-test")
}

// TestShimSeam: without an explicit path, every session looks bwrap up on its own PATH, so a
// fault's shim put first there is what runs.
func TestShimSeam(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		skip.Missing(t, "bwrap not installed (run `make deps`)")
	}
	shimDir := t.TempDir()
	shim := filepath.Join(shimDir, "bwrap")
	os.WriteFile(shim, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	tg, _ := New("")
	inv, err := tg.Prepare(&targets.Session{Dir: t.TempDir(), Workspace: "/", Env: []string{"PATH=" + shimDir + ":/usr/bin"}, Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Argv[0] != shim {
		t.Errorf("argv[0] = %s, want the shim %s", inv.Argv[0], shim)
	}
}
