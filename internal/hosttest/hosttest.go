//go:build linux

// Package hosttest holds what the tests of hosts share (runner/hosts/..., e2e): the repository's
// root, stand-ins for the sandcheck binary, the wsl.exe stand-in, the throwaway sshd and the
// Docker engine.
package hosttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/internal/skip"
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

// RequireDocker starts the Docker engine with the project's own script (scripts/start-dockerd.sh)
// and returns a client of it; it skips, loudly, only where no engine can run at all.
func RequireDocker(t testing.TB) client.APIClient {
	t.Helper()
	skip.UnlessRoot(t, "the container tests (dockerd, fixture namespaces)")
	if out, err := exec.Command(filepath.Join(RepoRoot(t), "scripts", "start-dockerd.sh")).CombinedOutput(); err != nil {
		skip.Missing(t, "no Docker engine can run here (scripts/start-dockerd.sh: %v):\n%s", err, out)
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// StaticSandcheck builds cmd/sandcheck with CGO_ENABLED=0 into a test directory: container and
// VM hosts copy the binary in, so it must be static. The build cache makes a second build a link.
func StaticSandcheck(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sandcheck")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sandcheck")
	build.Dir = RepoRoot(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	return bin
}
