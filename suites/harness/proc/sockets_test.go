package proc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A socket srt left when killed goes; one whose process still runs, one from before the run and
// a file that only looks like one stay.
func TestRemoveDeadMuxSockets(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	sock := func(pid int, seq string) string {
		p := filepath.Join(dir, "srt-mux-"+strconv.Itoa(pid)+"-"+seq+".sock")
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		// Closing a listener removes its file; keep the file, as a killed srt does.
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		return p
	}
	old := sock(dead.Process.Pid, "1")
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	start := time.Now().Add(-time.Second)
	stale := sock(dead.Process.Pid, "0")
	live := sock(os.Getpid(), "0")
	plain := filepath.Join(dir, "srt-mux-"+strconv.Itoa(dead.Process.Pid)+"-2.sock")
	os.WriteFile(plain, nil, 0o644)

	removeDeadMuxSockets([]string{"TMPDIR=" + dir}, start)
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead process's socket %s stayed (%v)", stale, err)
	}
	for _, p := range []string{old, live, plain} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
