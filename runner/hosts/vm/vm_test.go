//go:build linux

package vm

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage"
)

// The test binary doubles as the guest's job agent: it is what the vm tests boot with.
func TestMain(m *testing.M) {
	vmagent.MaybeRun()
	os.Exit(m.Run())
}

// requireVM skips loudly where this machine cannot boot a VM with the artifacts.
func requireVM(t testing.TB) {
	t.Helper()
	skip.Short(t, "VM boots")
	if _, err := exec.LookPath(QEMU); err != nil {
		skip.Missing(t, "%s not installed (scripts/vm-deps.sh): the vm host cannot be tested here", QEMU)
	}
	skip.UnlessRoot(t, "building the VM root filesystem (debootstrap)")
}

// testVM prepares a vm host of kernel suite, booting this test binary as its agent.
func testVM(t testing.TB, suite string, cfg Config) *Host {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kernel, cfg.Binary = suite, self
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if _, err := v.Prepare(context.Background(), self); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVMServesTrialsInOneBoot boots each kernel once and runs several jobs in that boot: the
// job's stdout, stderr and exit come back; the kernel is the one asked for; bubblewrap works in
// the guest; every job gets an empty /tmp; a job past its deadline is killed inside the guest
// with what it left the group, its output up to then kept, and the next job runs in the same
// boot.
func TestVMServesTrialsInOneBoot(t *testing.T) {
	requireVM(t)
	for _, suite := range []string{"bookworm", "trixie"} {
		t.Run(suite, func(t *testing.T) {
			v := testVM(t, suite, Config{Env: map[string]string{"FOO": "a b"}, Log: testLog{t}})
			ctx := context.Background()
			start := time.Now()
			r := v.Exec(ctx, hosts.Cmd("sh", "-c", `uname -r; echo "$FOO"; ls -A /tmp | wc -l; touch /tmp/mark; `+
				`bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid sh -c 'ip -o link | wc -l'; echo err >&2; exit 3`), 2*time.Minute)
			if r.Err != nil {
				t.Fatalf("exec: %v", r.Err)
			}
			want := v.Kernel().Release + "\na b\n0\n1\n"
			if r.Exit != 3 || string(r.Stdout) != want || string(r.Stderr) != "err\n" {
				t.Fatalf("exec: exit %d stdout %q (want %q) stderr %q", r.Exit, r.Stdout, want, r.Stderr)
			}
			t.Logf("boot + first job (kernel %s): %s", v.Kernel().Release, time.Since(start).Round(time.Millisecond))

			start = time.Now()
			r = v.Exec(ctx, hosts.Cmd("sh", "-c", `ls -A /tmp | wc -l; setsid sleep 600 & echo early; exec sleep 600`), 5*time.Second)
			if !r.TimedOut || r.Err != nil || !strings.Contains(string(r.Stdout), "0\nearly") || time.Since(start) > 30*time.Second {
				t.Fatalf("deadline: %+v (stdout %q) after %s", r, r.Stdout, time.Since(start))
			}

			start = time.Now()
			r = v.Exec(ctx, hosts.Cmd("sh", "-c", `pgrep -x sleep || echo none left`), time.Minute)
			if r.Err != nil || r.Exit != 0 || strings.TrimSpace(string(r.Stdout)) != "none left" {
				t.Fatalf("after a killed job: %+v (stdout %q)", r, r.Stdout)
			}
			t.Logf("a job in a running boot: %s", time.Since(start).Round(time.Millisecond))
			if n := v.Boots(); n != 1 {
				t.Fatalf("%d boots for 3 jobs, want 1", n)
			}
			if iso := v.Isolation(); !strings.Contains(iso, v.Kernel().Release) || !strings.Contains(iso, "boot per host") {
				t.Errorf("isolation %q does not say how trials share the boot", iso)
			}
		})
	}
}

// A guest that stops answering is killed and its job is harness trouble; the next job boots a
// fresh guest. With trials_per_boot 1 every job boots its own.
func TestVMWedgedGuestIsReplaced(t *testing.T) {
	requireVM(t)
	v := testVM(t, "bookworm", Config{})
	ctx := context.Background()
	if r := v.Exec(ctx, hosts.Cmd("true"), 3*time.Minute); r.Err != nil { // booted
		t.Fatal(r.Err)
	}
	// The job stops the agent itself ($PPID of the job's shell), then hangs.
	r := v.Exec(ctx, hosts.Cmd("sh", "-c", `kill -STOP $PPID; sleep 600`), 5*time.Second)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "wedged") {
		t.Fatalf("wedged guest: %+v (stdout %q)", r, r.Stdout)
	}
	r = v.Exec(ctx, hosts.Cmd("true"), time.Minute)
	if r.Err != nil || r.Exit != 0 || v.Boots() != 2 {
		t.Fatalf("after a wedged guest: %+v, %d boots", r, v.Boots())
	}

	one := testVM(t, "bookworm", Config{TrialsPerBoot: 1})
	for range 2 {
		if r := one.Exec(ctx, hosts.Cmd("true"), time.Minute); r.Err != nil || r.Exit != 0 {
			t.Fatalf("%+v", r)
		}
	}
	if one.Boots() != 2 || !strings.Contains(one.Isolation(), "boot per trial") {
		t.Fatalf("trials_per_boot 1: %d boots, isolation %q", one.Boots(), one.Isolation())
	}
}

func TestVMInitFailureIsHarnessError(t *testing.T) {
	requireVM(t)
	v := testVM(t, "bookworm", Config{})
	// A root disk that is not ext4: init reports it and powers off; the trial is a harness error.
	bad, _ := os.CreateTemp("", "sandcheck-vm-bad-*.img")
	bad.Truncate(1 << 20)
	bad.Close()
	defer os.Remove(bad.Name())
	v.rootfs = &vmimage.Rootfs{Image: bad.Name()}
	r := v.Exec(context.Background(), hosts.Cmd("true"), time.Minute)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "cannot mount the root disk") {
		t.Fatalf("bad root disk: %+v", r)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// BenchmarkVMBoot measures, per kernel, a boot until the agent is ready plus a `true` job, and
// then a `true` job in the running boot.
func BenchmarkVMBoot(b *testing.B) {
	requireVM(b)
	for _, suite := range []string{"bullseye", "bookworm", "bookworm-backports", "trixie", "trixie-backports"} {
		b.Run(suite, func(b *testing.B) {
			var boot, job time.Duration
			for b.Loop() {
				v := testVM(b, suite, Config{})
				start := time.Now()
				if r := v.Exec(context.Background(), hosts.Cmd("true"), 2*time.Minute); r.Exit != 0 || r.Err != nil {
					b.Fatalf("%+v", r)
				}
				boot += time.Since(start)
				start = time.Now()
				if r := v.Exec(context.Background(), hosts.Cmd("true"), 2*time.Minute); r.Exit != 0 || r.Err != nil {
					b.Fatalf("%+v", r)
				}
				job += time.Since(start)
				v.Close()
			}
			b.ReportMetric(boot.Seconds()/float64(b.N), "boot+job-s")
			b.ReportMetric(job.Seconds()/float64(b.N)*1000, "job-in-boot-ms")
		})
	}
}

// While a trial runs in the guest, no process there holds its key in its command line or
// environment; the trial still gets it.
func TestVMTrialKeyInNoCommandLineOrEnvironment(t *testing.T) {
	requireVM(t)
	v := testVM(t, "bookworm", Config{})
	var scan keyscan.Scan
	e, err := hosts.NewExecutor(v, hosts.Trials{Binary: "unused",
		Argv:   func(t runner.Trial, _ string) []string { return keyscan.Argv(t.Key) },
		Parse:  scan.Parse,
		Frames: keyscan.Trials})
	if err != nil {
		t.Fatal(err)
	}
	key := runner.NewKey()
	start := time.Now()
	rec := e.Run(context.Background(), runner.Trial{Key: key, Timeout: 3 * time.Minute})
	t.Logf("boot and key scan in the guest: %s", time.Since(start).Round(time.Millisecond))
	scan.Check(t, key, rec)
}
