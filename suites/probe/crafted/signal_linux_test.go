//go:build linux

package crafted

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSignalKillsOnlyTheMarked: a signal request kills the process whose argv holds its marker
// (Connected), and finds nothing for a marker no process holds.
func TestSignalKillsOnlyTheMarked(t *testing.T) {
	marker := "sandcheck n0nce sig-" + time.Now().Format("150405.000000")
	cmd := exec.Command("sh", "-c", "sleep 60; :", marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()

	if res := Send(Request{ID: "none", Via: ViaSignal, Addr: marker + "-other"}, "n0nce", time.Second); res.Connected || res.Errno != "ESRCH" {
		t.Errorf("a marker no process holds: %+v", res)
	}
	res := Send(Request{ID: "sig", Via: ViaSignal, Addr: marker}, "n0nce", time.Second)
	if !res.Connected {
		t.Fatalf("the marked process was not signalled: %+v", res)
	}
	select {
	case err := <-ended:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the marked process ended %v, want killed by SIGKILL", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the marked process still runs")
	}
}
