//go:build linux

// Package hosttest holds what the host drivers' tests share (runner/hosts/...): the repository's
// root, stand-ins for the sandcheck binary, the wsl.exe stand-in, the throwaway sshd, and waits
// on processes of the host.
package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/sshdtest"
)

// RepoRoot is the directory holding go.mod, above the test's directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	d, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatal("go.mod not found above the test's directory")
		}
		d = filepath.Dir(d)
	}
}

// StartSSHD starts the throwaway sshd (internal/sshdtest, scripts/sshd-throwaway.sh).
func StartSSHD(t testing.TB) *sshdtest.SSHD {
	t.Helper()
	return sshdtest.Start(t, filepath.Join(RepoRoot(t), "scripts", "sshd-throwaway.sh"))
}

// FakeSandcheck is a stand-in binary for Prepare: a script answering `version`.
func FakeSandcheck(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sandcheck")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n[ \"$1\" = version ] && echo 'sandcheck fake'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// UserFake is a sandcheck stand-in that logs its arguments to log and knows one account it
// cannot find (nosuch), as `sandcheck user` says.
func UserFake(t testing.TB) (bin, log string) {
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

// WSLStub builds testdata/wslstub, the wsl.exe stand-in (no Windows exists here), and points
// its state and call log into a temp dir.
func WSLStub(t testing.TB) (exe, log string) {
	t.Helper()
	dir := t.TempDir()
	exe = filepath.Join(dir, "wsl.exe")
	b := exec.Command("go", "build", "-o", exe, "./testdata/wslstub")
	b.Dir = RepoRoot(t)
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("build wslstub: %v\n%s", err, out)
	}
	log = filepath.Join(dir, "calls.jsonl")
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o755)
	t.Setenv("WSLSTUB_DISTROS", "Debian,Ubuntu")
	t.Setenv("WSLSTUB_STATE", state)
	t.Setenv("WSLSTUB_LOG", log)
	t.Setenv("WSLSTUB_IGNORE_UTF8", "")
	t.Setenv("WSLSTUB_DELAY", "")
	return exe, log
}

// Alive reports whether pid is a live (non-zombie) process.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// WaitDead fails the test unless every pid is gone within the time given.
func WaitDead(t testing.TB, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range pids {
		for Alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// ReadPids waits until file lists n pids (whitespace-separated) and returns them.
func ReadPids(t testing.TB, file string, n int, within time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, _ := os.ReadFile(file)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want %d pids, have %q", file, n, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
