//go:build linux

package hosts

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/runner/hosts/vmimage"
)

// requireVM skips loudly where this machine cannot boot a VM with the artifacts.
func requireVM(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: VM boots skipped")
	}
	if _, err := exec.LookPath(QEMU); err != nil {
		t.Skipf("SKIPPED LOUDLY: %s not installed (scripts/vm-deps.sh): the vm host cannot be tested here", QEMU)
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: building the VM root filesystem needs root (debootstrap)")
	}
}

// TestVMBootsAndRuns boots each kernel with busybox standing in for sandcheck: the job's
// stdout, stderr and exit status come back through the framed serial port; the kernel is the
// one asked for; bubblewrap works in the guest; a deadline kills QEMU.
func TestVMBootsAndRuns(t *testing.T) {
	requireVM(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: busybox-static not installed")
	}
	for _, suite := range []string{"bookworm", "trixie"} {
		t.Run(suite, func(t *testing.T) {
			v, err := NewVM(VMConfig{Kernel: suite, Binary: busybox, Env: map[string]string{"FOO": "a b"}, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			start := time.Now()
			bin, err := v.Prepare(context.Background(), busybox)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("prepare: %s", time.Since(start).Round(time.Millisecond))
			r := v.Exec(context.Background(), []string{"sh", "-c", `uname -r; echo "$FOO"; cmp ` + bin + ` /run/sc/busybox && echo via-bin; bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid sh -c 'ip -o link | wc -l'; echo err >&2; exit 3`}, 2*time.Minute)
			if r.Err != nil {
				t.Fatalf("exec: %v", r.Err)
			}
			want := v.Kernel().Release + "\na b\nvia-bin\n1\n"
			if r.Exit != 3 || string(r.Stdout) != want || string(r.Stderr) != "err\n" {
				t.Fatalf("exec: exit %d stdout %q (want %q) stderr %q", r.Exit, r.Stdout, want, r.Stderr)
			}
			t.Logf("boot + job + poweroff (kernel %s): %s", v.Kernel().Release, r.Duration.Round(time.Millisecond))
			if iso := v.Isolation(); !strings.Contains(iso, v.Kernel().Release) {
				t.Errorf("isolation %q does not name the kernel", iso)
			}
			start = time.Now()
			r = v.Exec(context.Background(), []string{"sleep", "600"}, 5*time.Second)
			if !r.TimedOut || time.Since(start) > 15*time.Second {
				t.Fatalf("deadline: %+v after %s", r, time.Since(start))
			}
		})
	}
}

func TestVMInitFailureIsHarnessError(t *testing.T) {
	requireVM(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: busybox-static not installed")
	}
	v, _ := NewVM(VMConfig{Kernel: "bookworm", Binary: busybox})
	defer v.Close()
	if _, err := v.Prepare(context.Background(), busybox); err != nil {
		t.Fatal(err)
	}
	// A root disk that is not ext4: init reports it and powers off; the trial is a harness error.
	bad, _ := os.CreateTemp("", "sandcheck-vm-bad-*.img")
	bad.Truncate(1 << 20)
	bad.Close()
	defer os.Remove(bad.Name())
	v.rootfs = &vmimage.Rootfs{Image: bad.Name()}
	r := v.Exec(context.Background(), []string{"true"}, time.Minute)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "cannot mount the root disk") {
		t.Fatalf("bad root disk: %+v", r)
	}
}

func TestParseResult(t *testing.T) {
	out := "noise\nSC-BEGIN n1\nSC-STDOUT n1\naGVsbG8K\nSC-STDERR n1\nSC-EXIT n1 4\n"
	r, ok := vmimage.ParseResult([]byte(out), "n1")
	if !ok || string(r.Stdout) != "hello\n" || len(r.Stderr) != 0 || r.Exit != 4 {
		t.Fatalf("%+v %v", r, ok)
	}
	if _, ok := vmimage.ParseResult([]byte(out), "other"); ok {
		t.Fatal("a frame with another nonce was accepted")
	}
	if r, ok := vmimage.ParseResult([]byte("SC-BEGIN n1\nSC-STDOUT n1\naGVsbG8K\n"), "n1"); ok || !r.Begun {
		t.Fatalf("cut-off frame: %+v %v", r, ok)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// BenchmarkVMBoot measures one trial's VM cost per kernel: boot, a `true` job, power off.
func BenchmarkVMBoot(b *testing.B) {
	requireVM(b)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		b.Skip("busybox-static not installed")
	}
	for _, suite := range []string{"bookworm", "trixie"} {
		b.Run(suite, func(b *testing.B) {
			v, _ := NewVM(VMConfig{Kernel: suite, Binary: busybox})
			defer v.Close()
			if _, err := v.Prepare(context.Background(), busybox); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if r := v.Exec(context.Background(), []string{"true"}, 2*time.Minute); r.Exit != 0 || r.Err != nil {
					b.Fatalf("%+v", r)
				}
			}
		})
	}
}
