//go:build linux

package hosts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userFake is a sandcheck stand-in that logs its arguments and knows one account it cannot
// find (nosuch), as `sandcheck user` says.
func userFake(t *testing.T) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	log = filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "sandcheck")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n" +
		"[ \"$1\" = version ] && echo 'sandcheck fake'\n" +
		"[ \"$1 $2\" = 'user nosuch' ] && { echo 'sandcheck user: no account nosuch on this host' >&2; exit 1; }\nexit 0\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

// TestRemotePrepareReadiesUsers: ssh and wsl hosts ready every account their cells run the
// sandbox as (sandcheck user SPEC on the host: root needs nothing), an account the host does
// not have stops Prepare with the host's word for it, and a login that is not root is refused
// up front (fixtures need root), naming what to change; closing the host sweeps after the users.
func TestRemotePrepareReadiesUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the stand-ins log in as root")
	}
	exe, _ := wslStub(t)
	ctx := context.Background()
	before, _ := filepath.Glob("/tmp/sandcheck-host-*")
	defer func() {
		// A Prepare that failed removed the run directory it had made: no Close would.
		if after, _ := filepath.Glob("/tmp/sandcheck-host-*"); len(after) > len(before) {
			t.Errorf("run dirs left behind: %v (before: %v)", after, before)
		}
	}()
	prepare := func(login string, specs ...string) (string, error) {
		t.Helper()
		w, err := NewWSL(WSLConfig{Name: "wsl", Distro: "Debian", User: login, Exe: exe, Root: "/", Users: specs})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		bin, log := userFake(t)
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

	s := startSSHD(t)
	h, err := NewSSH(SSHConfig{Name: "lo", Address: s.Addr, KeyFile: s.Key, KnownHosts: []string{s.KnownHosts}, Users: []string{"unprivileged"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bin, log := userFake(t)
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
