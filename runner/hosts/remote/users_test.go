//go:build linux

package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/runner/hosts/ssh"
	"github.com/sandcheck/sandcheck/runner/hosts/wsl"
)

// TestRemotePrepareReadiesUsers: ssh and wsl hosts ready every account their cells run the
// sandbox as (sandcheck user SPEC on the host: root needs nothing), an account the host does
// not have stops Prepare with the host's word for it, and a login that is not root is refused
// up front (fixtures need root), naming what to change; closing the host sweeps after the users.
func TestRemotePrepareReadiesUsers(t *testing.T) {
	skip.UnlessRoot(t, "the stand-ins log in as root")
	exe, _ := hosttest.WSLStub(t)
	ctx := context.Background()
	// The stand-in's distribution is this machine, and its run directories go to a TMPDIR of
	// this test's (open to every login, as /tmp is), where no other test's can be.
	tmp, err := os.MkdirTemp("", "sandcheck-remote-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o1777)
	t.Setenv("TMPDIR", tmp)
	defer func() {
		// A Prepare that failed removed the run directory it had made: no Close would.
		if left, _ := filepath.Glob(filepath.Join(tmp, "sandcheck-host-*")); len(left) > 0 {
			t.Errorf("run dirs left behind: %v", left)
		}
	}()
	prepare := func(login string, specs ...string) (string, error) {
		t.Helper()
		w, err := wsl.New(wsl.Config{Name: "wsl", Distro: "Debian", User: login, Exe: exe, Root: "/", Users: specs})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		bin, log := hosttest.UserFake(t)
		_, err = w.Prepare(ctx, bin)
		b, _ := os.ReadFile(log)
		return string(b), err
	}
	calls, err := prepare("root", "unprivileged", "root", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(calls, "user unprivileged\n") || !strings.Contains(calls, "user ci\n") || strings.Contains(calls, "user root") {
		t.Errorf("wsl: calls %q", calls)
	}
	if _, err := prepare("root", "nosuch"); err == nil || !strings.Contains(err.Error(), "user nosuch: exit -1") || !strings.Contains(err.Error(), "no account nosuch") {
		t.Errorf("wsl, missing account: %v", err)
	}
	if _, err := prepare("nobody", "unprivileged"); err == nil || !strings.Contains(err.Error(), "logged in as uid 65534") || !strings.Contains(err.Error(), "login: root") {
		t.Errorf("wsl, login nobody: %v", err)
	}

	s := hosttest.StartSSHD(t)
	h, err := ssh.New(ssh.Config{Name: "lo", Address: s.Addr, KeyFile: s.Key, KnownHosts: []string{s.KnownHosts}, Users: []string{"unprivileged"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bin, log := hosttest.UserFake(t)
	if _, err := h.Prepare(ctx, bin); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing cleans up after the user (what killed trials left) before the run dir goes.
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "user unprivileged\n") || !strings.HasSuffix(string(b), "user --sweep unprivileged\n") {
		t.Errorf("ssh: calls %q", b)
	}
}
