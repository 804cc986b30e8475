//go:build linux

// Package vm is the vm host kind: trials in QEMU guests of a Debian kernel, booted with a root
// filesystem that holds the sandbox (vmimage) and served by the job agent (vmagent).
package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/remote"
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage/initramfs"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage/vminit"
	"github.com/sandcheck/sandcheck/targets/npmcache"
)

// Environment read by the vm driver (config): defaults under the matrix entry.
const (
	EnvVMCache = config.VMCache // artifact cache (default /var/cache/sandcheck/vm)
	EnvVMLog   = config.VMLog   // "1": artifact builds report progress on stderr
)

// Kind is the matrix kind of vm hosts.
const Kind = "vm"

func init() {
	hosts.Register(hosts.Kind{Name: Kind, NpmCache: true, HostKind: matrix.HostKind{
		Keys: Keys, Settings: func(s *matrix.HostSettings) any { return Settings(s) },
	}, New: newFromMatrix})
}

// Keys are the matrix keys of a vm entry (kinds built on this driver read them too).
var Keys = []string{"image", "memory_mib", "rootfs", "accel", "trials_per_boot"}

// Settings reads the vm keys of an entry (Keys).
func Settings(s *matrix.HostSettings) Config {
	cfg := Config{
		Kernel:        s.Required("image", "a VM image"),
		Rootfs:        s.Optional("rootfs", "a Debian suite for the guest root filesystem"),
		Accel:         s.OneOf("accel", "tcg", "kvm"),
		TrialsPerBoot: s.PositiveInt("trials_per_boot", "how many trials one boot serves (1 = a boot per trial)"),
		MemoryMiB:     s.PositiveInt("memory_mib", "guest memory in MiB"),
	}
	if cfg.MemoryMiB > 0 && cfg.MemoryMiB < 128 {
		s.Errorf("memory_mib", "%d MiB is too little (expected at least 128)", cfg.MemoryMiB)
	}
	// The guest's root filesystem is sandcheck's own build: it has root, and the dedicated
	// account each boot creates; no other account exists there.
	for _, u := range s.Users() {
		if u != model.UserRoot && u != model.UserUnprivileged {
			s.Errorf("user", "%q: a vm guest has only %s and %s (its root filesystem is built by sandcheck)", u, model.UserUnprivileged, model.UserRoot)
		}
	}
	return cfg
}

// newFromMatrix builds a host from its matrix entry, with the environment's defaults under it.
func newFromMatrix(h matrix.Host, o hosts.Options) (hosts.Host, error) {
	cfg, _ := h.Settings.(Config)
	cfg, err := WithDefaults(h.Name, cfg)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// WithDefaults fills what the matrix entry left out from the environment (config), and shares
// this machine's npm cache with the guest.
func WithDefaults(name string, cfg Config) (Config, error) {
	env := config.Get()
	cfg.Name, cfg.Cache = name, env.VMCache
	if env.VMLog {
		cfg.Log = os.Stderr
	}
	// Versions a cell chose (srt@0.0.79) run from this machine's npm cache, shared read-only at
	// the same path, as container hosts mount it. Cached in the guest's page cache (cache=loose):
	// what a boot runs is installed before it, and without the cache every start of Claude Code
	// re-read its ~250 MB executable over 9p (`claude --version` 15 s under TCG, 1.3-2.3 s with).
	if npm := npmcache.New().Root(); isDir(npm) {
		cfg.Shares = append(cfg.Shares, vminit.Share{Tag: "npmcache", HostDir: npm, GuestDir: npm, ReadOnly: true, Model: "none",
			Options: vminit.DefaultShareOptions + ",cache=loose"})
	}
	return cfg, nil
}

func isDir(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }

// harnessSandboxTimeout is the trial's deadline for one sandboxed run (suites/harness reads it;
// hosts do not import the suites).
const harnessSandboxTimeout = config.SandboxTimeout

// TCGSandboxTimeout is a sandboxed run's deadline in a guest under TCG (see jobEnv).
const TCGSandboxTimeout = 120 * time.Second

// Config describes a vm host: a Debian kernel booted under QEMU with a root filesystem that
// holds the sandbox.
type Config struct {
	Name string
	// Kernel is the Debian suite whose linux-image-amd64 boots (bookworm: 6.1, trixie: 6.12,
	// bookworm-backports, trixie-backports, bullseye: 5.10, ...). The matrix's `image`.
	Kernel    string
	Rootfs    string // Debian suite of the root filesystem (default bookworm)
	MemoryMiB int    // default 1024
	CPUs      int    // default 1
	Accel     string // tcg (default) or kvm
	Cache     string // default /var/cache/sandcheck/vm
	Env       map[string]string
	Binary    string    // the Linux sandcheck to boot with (default: Prepare's argument)
	Log       io.Writer // artifact build progress
	Keep      bool      // keep the run directory (initramfs, console logs) for debugging
	// TrialsPerBoot is how many trials one boot serves before it is powered off and the next
	// trial boots a fresh VM; 0 = no limit (a boot serves the host's trials until the run ends
	// or the guest fails), 1 = a boot per trial.
	TrialsPerBoot int
	// MaxIdle is how many booted, idle guests the host keeps for its next trials (default 1);
	// one more boots whenever more of its trials run at once.
	MaxIdle int

	// What a kind built on this driver (wsl2like) shapes its guest with; all optional.
	// ReleaseSuffix boots a copy of the kernel whose release (uname -r, /proc/version) ends in
	// it (vmimage.KernelWithRelease).
	ReleaseSuffix string
	Shares        []vminit.Share // host directories the guest mounts over virtio-9p
	Setup         []byte         // a shell script the guest runs as root before its first trial
	// CPUBudget holds everything the guest's trials run to this fraction of one CPU (cgroup
	// cpu.max): start-up as slow as a loaded machine's. 0: no limit.
	CPUBudget float64
	// Describe opens Isolation (e.g. "WSL2-like: ...").
	Describe string
}

// Host runs trials in QEMU guests of one Debian kernel. A boot serves trial after trial (up to
// TrialsPerBoot): the guest's agent (vmagent) runs each trial in a fresh mount namespace with
// empty /tmp, /var/tmp and /root, and every trial sets up its own fixtures and workspace, so
// trials stay independent while the kernel boots once; a TCG boot costs seconds, several
// trials' worth of the sandbox's own start-up under emulation. A trial's output streams back as
// it is written, so a trial killed at its deadline (inside the guest, by process group and
// cookie) still leaves its evidence; a guest that stops answering is killed, its trial is a
// harness error, and the next trial boots a fresh one.
type Host struct {
	cfg Config

	mu     sync.Mutex
	kernel *vmimage.Kernel
	rootfs *vmimage.Rootfs
	dir    string // per-run: the initramfs with the run's binary, boot dirs
	initrd string
	shape  []string // QEMU arguments of the boot's shares, setup and CPU budget (shapeArgs)
	closed bool
	idle   []*guest
	busy   map[*guest]bool
	nextID int
	boots  int
}

// New checks the configuration; Prepare builds or fetches the artifacts.
func New(cfg Config) (*Host, error) {
	if cfg.Kernel == "" {
		return nil, fmt.Errorf("vm host %q: no kernel (image: a Debian suite such as bookworm or trixie)", cfg.Name)
	}
	if cfg.Name == "" {
		cfg.Name = "vm-" + cfg.Kernel
	}
	if cfg.Rootfs == "" {
		cfg.Rootfs = "bookworm"
	}
	if cfg.MemoryMiB == 0 {
		cfg.MemoryMiB = 1024
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 1
	}
	if cfg.MaxIdle == 0 {
		cfg.MaxIdle = 1
	}
	if cfg.TrialsPerBoot < 0 {
		return nil, fmt.Errorf("vm host %s: trials per boot %d: want 0 (no limit) or more", cfg.Name, cfg.TrialsPerBoot)
	}
	switch cfg.Accel {
	case "":
		cfg.Accel = "tcg"
	case "tcg", "kvm":
	default:
		return nil, fmt.Errorf("vm host %s: accel %q: want tcg or kvm", cfg.Name, cfg.Accel)
	}
	return &Host{cfg: cfg, busy: map[*guest]bool{}}, nil
}

// Name implements hosts.Host.
func (v *Host) Name() string { return v.cfg.Name }

// Isolation implements hosts.Host.
func (v *Host) Isolation() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := "Debian " + v.cfg.Kernel + " kernel"
	if v.kernel != nil {
		k = "kernel " + v.kernel.Release
	}
	boot := "VM boot per host, a fresh mount namespace per trial"
	switch n := v.cfg.TrialsPerBoot; {
	case n == 1:
		boot = "VM boot per trial"
	case n > 1:
		boot = fmt.Sprintf("VM boot per %d trials, a fresh mount namespace per trial", n)
	}
	iso := fmt.Sprintf("%s (QEMU %s, %s)", boot, strings.ToUpper(v.cfg.Accel), k)
	if v.cfg.Describe != "" {
		iso = v.cfg.Describe + ": " + iso
	}
	return iso
}

// Kernel is the booted kernel (after Prepare).
func (v *Host) Kernel() *vmimage.Kernel {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.kernel
}

// Boots is how many VMs the host has booted so far.
func (v *Host) Boots() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.boots
}

// QEMU is the emulator the vm hosts run.
const QEMU = "qemu-system-x86_64"

// Prepare implements hosts.Host: the kernel and root filesystem (cached after the first build), and
// this run's initramfs carrying the binary. The first boot waits for the first trial.
func (v *Host) Prepare(ctx context.Context, localBinary string) (string, error) {
	if _, err := exec.LookPath(QEMU); err != nil {
		return "", fmt.Errorf("vm host %s: %s not found (scripts/vm-deps.sh installs qemu-system-x86)", v.Name(), QEMU)
	}
	if v.cfg.Accel == "kvm" {
		if err := checkKVM(v.Name(), KVMDevice); err != nil {
			return "", err
		}
	}
	src, err := remote.LinuxBinary(v.cfg.Binary, localBinary)
	if err != nil {
		return "", err
	}
	if m, err := remote.ELFMachine(src); err != nil || m != "x86_64" {
		return "", fmt.Errorf("vm host %s: %s is not a linux/amd64 executable (%s %v)", v.Name(), src, m, err)
	}
	b := &vmimage.Builder{Cache: v.cfg.Cache, Log: v.cfg.Log}
	k, err := b.KernelWithRelease(ctx, v.cfg.Kernel, v.cfg.ReleaseSuffix)
	if err != nil {
		return "", fmt.Errorf("vm host %s: %w", v.Name(), err)
	}
	r, err := b.Rootfs(ctx, v.cfg.Rootfs)
	if err != nil {
		return "", fmt.Errorf("vm host %s: %w", v.Name(), err)
	}
	dir, err := os.MkdirTemp("", "sandcheck-vm-")
	if err != nil {
		return "", err
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	if err := initramfs.WriteRun(initrd, k.Initrd, src); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("vm host %s: initramfs: %w", v.Name(), err)
	}
	shape, err := v.shapeArgs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("vm host %s: %w", v.Name(), err)
	}
	v.mu.Lock()
	v.kernel, v.rootfs, v.dir, v.initrd, v.shape = k, r, dir, initrd, shape
	v.mu.Unlock()
	return vminit.GuestBinary, nil
}

var _ hosts.Execer = (*Host)(nil)

// Exec implements hosts.Execer: one job on a booted guest (booting one when none is idle), its
// input inside the job (on the serial channel), not in its command line or environment.
func (v *Host) Exec(ctx context.Context, c hosts.Command, timeout time.Duration) hosts.Result {
	return hosts.Timed(func() hosts.Result { return v.exec(ctx, c, timeout) })
}

func (v *Host) exec(ctx context.Context, c hosts.Command, timeout time.Duration) hosts.Result {
	v.mu.Lock()
	prepared, closed := v.kernel != nil, v.closed
	v.nextID++
	id := v.nextID
	v.mu.Unlock()
	switch {
	case closed:
		return hosts.Result{Exit: -1, Err: errors.New("host closed")}
	case !prepared:
		return hosts.Result{Exit: -1, Err: errors.New("vm host not prepared")}
	}
	// A boot counts against the trial's deadline (the runner's is for the whole trial): a
	// trial that cannot get a guest in time is a harness error, not a hang.
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, timeout)
	g, err := v.acquire(bctx)
	cancel()
	if err != nil {
		return hosts.Result{Exit: -1, Err: fmt.Errorf("boot (kernel %s): %w", v.Kernel().Release, err)}
	}
	jr := g.run(ctx, id, vmagent.Job{Argv: c.Argv, Env: v.jobEnv(), Stdin: c.Stdin}, c.Stdout, timeout-time.Since(start))
	v.release(g, jr.healthy)
	return jr.Result
}

// jobEnv is the environment a trial gets in the guest: SANDCHECK_PASSENV and the host's Env,
// and under TCG a longer deadline for each sandboxed run unless those set one: under emulation
// a sandbox starts in seconds, not a fraction of one, and a slow answer (a tenth of the
// deadline is the probe's per request) must not be taken for a dead proxy. The trial's own
// budget still bounds the whole.
func (v *Host) jobEnv() []string {
	env := remote.TrialEnv(v.cfg.Env)
	if v.cfg.Accel != "tcg" {
		return env
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, harnessSandboxTimeout+"=") {
			return env
		}
	}
	return append(env, harnessSandboxTimeout+"="+TCGSandboxTimeout.String())
}

// acquire takes an idle guest, or boots one.
func (v *Host) acquire(ctx context.Context) (*guest, error) {
	v.mu.Lock()
	for len(v.idle) > 0 {
		g := v.idle[len(v.idle)-1]
		v.idle = v.idle[:len(v.idle)-1]
		if g.alive() {
			v.busy[g] = true
			v.mu.Unlock()
			return g, nil
		}
		go g.kill()
	}
	if v.closed {
		v.mu.Unlock()
		return nil, errors.New("host closed")
	}
	v.boots++
	v.mu.Unlock()
	g, err := v.boot(ctx)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		go g.quit()
		return nil, errors.New("host closed")
	}
	v.busy[g] = true
	return g, nil
}

// release gives a guest back after a job: kept for the next trial if it is healthy, has trials
// left in its boot and the host keeps fewer than MaxIdle idle; else powered off.
func (v *Host) release(g *guest, healthy bool) {
	v.mu.Lock()
	delete(v.busy, g)
	keep := healthy && !v.closed && g.alive() && len(v.idle) < v.cfg.MaxIdle &&
		(v.cfg.TrialsPerBoot == 0 || g.jobs < v.cfg.TrialsPerBoot)
	if keep {
		v.idle = append(v.idle, g)
	}
	v.mu.Unlock()
	if !keep {
		if healthy && g.alive() {
			go g.quit()
		} else {
			go g.kill()
		}
	}
}

// Close implements hosts.Host: every guest powered off (killed if it does not), the run directory
// removed.
func (v *Host) Close() error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	guests := append([]*guest(nil), v.idle...)
	for g := range v.busy {
		guests = append(guests, g)
	}
	v.idle = nil
	v.mu.Unlock()
	var wg sync.WaitGroup
	for _, g := range guests {
		wg.Go(g.quit)
	}
	wg.Wait()
	if v.dir != "" && !v.cfg.Keep {
		return os.RemoveAll(v.dir)
	}
	return nil
}

// shapeArgs writes the boot's optional fw_cfg items (vminit.FwMounts, FwSetup, FwCPUMax) into
// the run directory and returns the QEMU arguments that pass them and export the shares.
func (v *Host) shapeArgs(dir string) ([]string, error) {
	var args []string
	item := func(name string, data []byte) error {
		f := filepath.Join(dir, "fw-"+name)
		if err := os.WriteFile(f, data, 0o600); err != nil {
			return err
		}
		args = append(args, "-fw_cfg", "name=opt/sandcheck/"+name+",file="+f)
		return nil
	}
	if len(v.cfg.Shares) > 0 {
		m, err := vminit.MountsFile(v.cfg.Shares)
		if err != nil {
			return nil, err
		}
		if err := item(vminit.FwMounts, m); err != nil {
			return nil, err
		}
		for _, s := range v.cfg.Shares {
			a, err := s.QEMUArgs()
			if err != nil {
				return nil, err
			}
			args = append(args, a...)
		}
	}
	if len(v.cfg.Setup) > 0 {
		if err := item(vminit.FwSetup, v.cfg.Setup); err != nil {
			return nil, err
		}
	}
	if v.cfg.CPUBudget > 0 {
		c, err := vminit.CPUMax(v.cfg.CPUBudget)
		if err != nil {
			return nil, err
		}
		if err := item(vminit.FwCPUMax, c); err != nil {
			return nil, err
		}
	}
	return args, nil
}
