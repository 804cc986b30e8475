//go:build linux

package proc

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// The main goroutine keeps the main thread, so startUnder's thread is another one: Go never ends
// the main thread (it parks it), which would hide a thread that ends too early.
func init() { runtime.LockOSThread() }

// A command run under binds sees them, read-only where asked, and nothing else of this process
// does: the mount namespace is the command's alone.
func TestRunUnderBinds(t *testing.T) {
	skip.UnlessRoot(t, "mount namespaces")
	dir := t.TempDir()
	hosts := dir + "/hosts"
	os.WriteFile(hosts, []byte("198.18.0.2 allowed.sandcheck.test\n"), 0o644)
	before, _ := os.ReadFile("/etc/hosts")
	r := RunCommand(t.Context(), []string{"sh", "-c", "cat /etc/hosts; echo x >> /etc/hosts && echo wrote"}, nil, "", "", 10*time.Second, time.Second,
		Bind{Src: hosts, Dst: "/etc/hosts", RO: true})
	if string(r.Stdout) != "198.18.0.2 allowed.sandcheck.test\n" || !strings.Contains(r.Stderr, "Read-only") || r.Exit == 0 {
		t.Fatalf("under the bind: exit %d stdout %q stderr %q", r.Exit, r.Stdout, r.Stderr)
	}
	if len(r.Mounts) != 1 || !strings.HasSuffix(r.Mounts[0], "on /etc/hosts, ro") {
		t.Fatalf("mounts recorded: %v", r.Mounts)
	}
	if after, _ := os.ReadFile("/etc/hosts"); string(after) != string(before) {
		t.Fatal("the bind leaked into this process's namespace")
	}
	if r := RunCommand(t.Context(), []string{"cat", "/etc/hosts"}, nil, "", "", 10*time.Second, time.Second); string(r.Stdout) != string(before) {
		t.Fatalf("a later command without binds sees %q", r.Stdout)
	}
}

// The thread that forked a command under binds lives as long as the command: for
// PR_SET_PDEATHSIG it is the command's parent, and bwrap --die-with-parent exec'd as the command
// died with it. The thread is the one task of this process in the command's mount namespace.
func TestForkingThreadOutlivesTheCommand(t *testing.T) {
	skip.UnlessRoot(t, "mount namespaces")
	dir := t.TempDir()
	os.WriteFile(dir+"/a", nil, 0o644)
	os.WriteFile(dir+"/b", nil, 0o644)
	script := `sleep 0.3; me=$(readlink /proc/self/ns/mnt)
for ns in /proc/$PPID/task/*/ns/mnt; do [ "$(readlink "$ns")" = "$me" ] && echo parent-thread-alive; done; exit 0`
	r := RunCommand(t.Context(), []string{"sh", "-c", script}, nil, "", "", 10*time.Second, time.Second,
		Bind{Src: dir + "/a", Dst: dir + "/b"})
	if r.Exit != 0 || !strings.Contains(string(r.Stdout), "parent-thread-alive") {
		t.Fatalf("the forking thread was gone while the command ran: exit %d stdout %q stderr %q", r.Exit, r.Stdout, r.Stderr)
	}
}

// A tmpfs bind bounds the room of a path: a write past its size fails with ENOSPC, inside the
// command's namespace only, started here or through wrapMounts' shell (an isolated host's).
func TestTmpfsBindBoundsRoom(t *testing.T) {
	skip.UnlessRoot(t, "mount namespaces")
	dir := t.TempDir()
	fill := []string{"sh", "-c", "dd if=/dev/zero of=" + dir + "/fill bs=1M count=16 2>&1; echo rc=$?"}
	bind := Bind{Dst: dir, Tmpfs: "4m"}
	for name, argv := range map[string][]string{"here": fill, "wrapMounts": wrapMounts(fill, []Bind{bind})} {
		var r Run
		if name == "here" {
			r = RunCommand(t.Context(), argv, nil, "", "", 10*time.Second, time.Second, bind)
		} else {
			r = RunCommand(t.Context(), argv, nil, "", "", 10*time.Second, time.Second)
		}
		if !strings.Contains(string(r.Stdout), "No space left") || !strings.Contains(string(r.Stdout), "rc=1") {
			t.Errorf("%s: 16 MiB into a 4 MiB tmpfs: %q %q", name, r.Stdout, r.Stderr)
		}
		if _, err := os.Stat(dir + "/fill"); !os.IsNotExist(err) {
			t.Errorf("%s: the tmpfs's file shows outside the command's namespace (%v)", name, err)
		}
	}
}
