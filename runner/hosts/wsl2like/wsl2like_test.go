//go:build linux

package wsl2like

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/vm"
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
)

// The test binary doubles as the guest's job agent.
func TestMain(m *testing.M) {
	vmagent.MaybeRun()
	os.Exit(m.Run())
}

func bootable(t *testing.T, c Config) *Host {
	t.Helper()
	skip.Short(t, "VM boots")
	if _, err := exec.LookPath(vm.QEMU); err != nil {
		skip.Missing(t, "%s not installed (scripts/vm-deps.sh): the wsl2-like host cannot be tested here", vm.QEMU)
	}
	skip.UnlessRoot(t, "building the VM root filesystem (debootstrap)")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.VM.Binary = self
	if c.VM, err = vm.WithDefaults("wsl-test", c.VM); err != nil {
		t.Fatal(err)
	}
	h, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := h.Prepare(context.Background(), self); err != nil {
		t.Fatal(err)
	}
	return h
}

// What a sandbox sees of the WSL 2 guest, in one boot: the marker in the release and in
// /proc/version, also in the proc bubblewrap mounts for its sandbox (a bind mount over
// /proc/version would make that mount fail); the trials' directory on the 9p drive, where fsync
// returns (Claude Code's and git's writes need it); WSL's interop variables and a listening
// interop socket; the npm cache at its path; the CPU budget on everything the agent starts. Then
// the drive is gone from the host after Close.
func TestWSL2GuestLooksLikeWSL2(t *testing.T) {
	h := bootable(t, Config{VM: vm.Config{Kernel: "bookworm"}, CPUPercent: 50})
	r := h.Exec(context.Background(), hosts.Cmd("sh", "-c", `uname -r; cat /proc/version
bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net cat /proc/version
awk '$2 == "/mnt/c" {print $3}' /proc/mounts; stat -f -c 'statfs=%t' "$SANDCHECK_WORKDIR"; echo "$SANDCHECK_WORKDIR $WSL_DISTRO_NAME $WSL_INTEROP"
test -S "$WSL_INTEROP" && echo interop-listening
touch "$SANDCHECK_WORKDIR/probe" && echo drive-writable
`+fsyncReturns+`
setpriv --reuid=1000 --regid=1000 --clear-groups ls "$SANDCHECK_WORKDIR" >/dev/null && echo user-enters-drive
ls -d /var/cache/sandcheck/npm/@anthropic-ai >/dev/null && echo npm-shared
cat /sys/fs/cgroup/sandcheck/cpu.max; grep -c sandcheck /proc/self/cgroup`), 3*time.Minute)
	if r.Err != nil || r.Exit != 0 {
		t.Fatalf("exit %d %v: %s %s", r.Exit, r.Err, r.Stdout, r.Stderr)
	}
	out := string(r.Stdout)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 10 || !strings.HasSuffix(lines[0], "-microsoft-standard-WSL2") ||
		!strings.Contains(lines[1], lines[0]) || !strings.Contains(lines[2], lines[0]) {
		t.Fatalf("release, /proc/version, bwrap's /proc/version:\n%s", out)
	}
	for _, want := range []string{"\n9p\n", "fsync-returned", WorkDir + " Debian " + InteropSock, "interop-listening", "drive-writable", "user-enters-drive", "npm-shared", "50000 100000", "\n1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("guest output lacks %q:\n%s", want, out)
		}
	}
	if iso := h.Isolation(); !strings.Contains(iso, "WSL2-like") || !strings.Contains(iso, lines[0]) {
		t.Errorf("isolation %q", iso)
	}
	drive := h.drive
	h.Close()
	if _, err := os.Stat(drive); !os.IsNotExist(err) {
		t.Errorf("the drive %s outlived Close: %v", drive, err)
	}
}

// fsyncReturns prints fsync-returned when an fsync on the drive returns within ~10 s, else
// fsync-hung; a hung one cannot be killed (it waits in the 9p client), so it is left to the boot.
const fsyncReturns = `dd if=/dev/zero of="$SANDCHECK_WORKDIR/synced" bs=1k count=1 conv=fsync 2>/dev/null & p=$!
i=0; while kill -0 $p 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i+1)); done
if kill -0 $p 2>/dev/null; then echo fsync-hung; else echo fsync-returned; fi`

// The 9p2000.u drive is the one whose statfs says 9p (srt's Windows-drive branch); its fsync
// hangs under QEMU's server, which is why it is not the default. Pinned both ways, so a QEMU that
// answers it shows here.
func TestWSL2DriveOver9P2000U(t *testing.T) {
	h := bootable(t, Config{VM: vm.Config{Kernel: "bookworm"}, DriveProtocol: Drive9P2000U})
	r := h.Exec(context.Background(), hosts.Cmd("sh", "-c", `stat -f -c 'statfs=%t' "$SANDCHECK_WORKDIR"
`+fsyncReturns), 3*time.Minute)
	if r.Err != nil || r.Exit != 0 {
		t.Fatalf("exit %d %v: %s %s", r.Exit, r.Err, r.Stdout, r.Stderr)
	}
	out := string(r.Stdout)
	for _, want := range []string{"statfs=1021997\n", "fsync-hung"} {
		if !strings.Contains(out, want) {
			t.Errorf("guest output lacks %q:\n%s", want, out)
		}
	}
	if iso := h.Isolation(); !strings.Contains(iso, "fsync on the drive hangs") {
		t.Errorf("isolation %q does not say the drive's fsync hangs", iso)
	}
}

// WSL 1 has no Linux kernel of its own and srt does not support it: on the wsl1 variant srt
// must refuse, by its own reading of /proc/version.
func TestWSL1GuestIsRefusedBySRT(t *testing.T) {
	h := bootable(t, Config{VM: vm.Config{Kernel: "bookworm"}, Variant: WSL1})
	r := h.Exec(context.Background(), hosts.Cmd("sh", "-c", `uname -r; cd "$SANDCHECK_WORKDIR" &&
printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}' > s.json &&
srt --settings s.json -c 'echo ran'`), 3*time.Minute)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Exit == 0 || strings.Contains(string(r.Stdout), "ran") || !strings.Contains(string(r.Stdout)+string(r.Stderr), "Unsupported platform") ||
		!strings.HasSuffix(strings.SplitN(string(r.Stdout), "\n", 2)[0], "-Microsoft") {
		t.Fatalf("srt on WSL1: exit %d, stdout %q, stderr %q", r.Exit, r.Stdout, r.Stderr)
	}
}
