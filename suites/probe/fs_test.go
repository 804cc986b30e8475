package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAwaitMeetsAFileMadeAfterTheStart: a check with Await asks the host for its file (the await
// mark) and waits for the host's ack before its operation, so it reads a file the host made only
// after the command started; with no ack it goes on after the limit and says so.
func TestAwaitMeetsAFileMadeAfterTheStart(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "late.key")
	mark := filepath.Join(dir, ".await-late")
	go func() {
		for {
			if _, err := os.Stat(mark); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = os.WriteFile(late, []byte("canary"), 0o644)
		_ = os.WriteFile(mark+".ack", nil, 0o644)
	}()
	r := runFS([]FSCheck{{Name: "late", Op: OpRead, Path: late, Await: mark}})[0]
	if !r.OK || r.Data != "canary" || !r.Awaited {
		t.Fatalf("late read: %+v, want the host's file after its ack", r)
	}

	defer func(d time.Duration) { awaitLimit = d }(awaitLimit)
	awaitLimit = 50 * time.Millisecond
	r = runFS([]FSCheck{{Name: "never", Op: OpRead, Path: filepath.Join(dir, "never"), Await: filepath.Join(dir, ".await-never")}})[0]
	if r.OK || r.Awaited || r.Errno != "ENOENT" {
		t.Fatalf("unanswered await: %+v, want ENOENT and no ack", r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".await-never")); err != nil {
		t.Fatalf("the await mark was not left for the host: %v", err)
	}
}

// TestSymlinkMakesItsDirectories: a link planted below directories that are not there yet makes
// them first when asked (Mkdir), and lists them for the harness to remove; without Mkdir it fails.
func TestSymlinkMakesItsDirectories(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "next", ".claude", "agents")
	r := runFS([]FSCheck{
		{Name: "plain", Op: OpSymlink, Path: filepath.Join(dir, "other", "link"), Path2: "/oldroot/x"},
		{Name: "mkdir", Op: OpSymlink, Path: at, Path2: "/oldroot/x", Mkdir: true},
	})
	if r[0].OK || r[0].Errno != "ENOENT" {
		t.Fatalf("without Mkdir: %+v", r[0])
	}
	if !r[1].OK || len(r[1].Created) != 2 || r[1].Created[0] != filepath.Dir(at) {
		t.Fatalf("with Mkdir: %+v", r[1])
	}
	if got, err := os.Readlink(at); err != nil || got != "/oldroot/x" {
		t.Fatalf("link: %q %v", got, err)
	}
}

// TestReplaceSwapsARunningProgram: replace renames a new file over the path, which a running
// program's own file allows where a write into it fails (ETXTBSY).
func TestReplaceSwapsARunningProgram(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "sleep")
	b, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	rs := runFS([]FSCheck{{Name: "append", Op: OpAppend, Path: prog, Content: "x"}, {Name: "replace", Op: OpReplace, Path: prog, Content: "token"}})
	if rs[0].OK || rs[0].Errno != "ETXTBSY" {
		t.Errorf("append to a running program: %+v, want ETXTBSY", rs[0])
	}
	if got, _ := os.ReadFile(prog); !rs[1].OK || string(got) != "token" {
		t.Errorf("replace: %+v, the file now %q", rs[1], got)
	}
}
