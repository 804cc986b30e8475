//go:build linux

package rundir

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/procfs"
	"github.com/sandcheck/sandcheck/internal/testwait"
)

func TestLeftoverWithRecycledPidIsSpared(t *testing.T) {
	path := filepath.Join(t.TempDir(), PgidFile)
	self := os.Getpid()
	st, err := procfs.StartTicks(self)
	if err != nil {
		t.Fatal(err)
	}
	// Our own pid with a different start time stands for a recycled pid: it must survive.
	os.WriteFile(path, fmt.Appendf(nil, "boot %s\n+%d %d\n", procfs.BootID(), self, st+1), 0o644)
	if n, err := KillLeftovers(path); n != 0 || err != nil {
		t.Fatalf("killed %d, err %v", n, err)
	}
	// A file from before a reboot is ignored.
	os.WriteFile(path, fmt.Appendf(nil, "boot other-boot\n+%d %d\n", self, st), 0o644)
	if n, err := KillLeftovers(path); n != 0 || err != nil {
		t.Fatalf("killed %d, err %v", n, err)
	}
	// An exited group is not killed.
	os.WriteFile(path, fmt.Appendf(nil, "boot %s\n+%d %d\n-%d\n", procfs.BootID(), self, st, self), 0o644)
	if n, err := KillLeftovers(path); n != 0 || err != nil {
		t.Fatalf("killed %d, err %v", n, err)
	}
	os.WriteFile(path, []byte("garbage\n"), 0o644)
	if _, err := KillLeftovers(path); err == nil || !strings.Contains(err.Error(), PgidFile+":1: not a pgid file") {
		t.Fatalf("err %v", err)
	}
	os.WriteFile(path, fmt.Appendf(nil, "boot %s\n+12 x\n", procfs.BootID()), 0o644)
	if _, err := KillLeftovers(path); err == nil || !strings.Contains(err.Error(), PgidFile+`:2: expected "+pgid starttime" or "-pgid", got "+12 x"`) {
		t.Fatalf("err %v", err)
	}
}

func TestPgidLogCompacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), PgidFile)
	p := NewPgidLog(path)
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	// Many short-lived groups and one that stays: the log must stay small and still name it.
	sleeper := exec.Command("sleep", "1000")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Wait()
	p.Started(sleeper.Process.Pid)
	for i := range 10000 {
		p.Started(1000000 + i)
		p.Exited(1000000 + i)
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() > compactAt+100 {
		t.Fatalf("log is %d bytes", st.Size())
	}
	p.f.Close() // as if the runner died: the log stays
	if n, err := KillLeftovers(path); n != 1 || err != nil {
		t.Fatalf("killed %d, err %v", n, err)
	}
	testwait.Gone(t, 2*time.Second, sleeper.Process.Pid)
}
