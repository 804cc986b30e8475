//go:build linux

package hosts

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage"
)

// Environment read by the vm driver (until the matrix has fields for these).
const (
	EnvVMCache  = "SANDCHECK_VM_CACHE"  // artifact cache (default /var/cache/sandcheck/vm)
	EnvVMRootfs = "SANDCHECK_VM_ROOTFS" // Debian suite of the guest's root filesystem (default bookworm)
	EnvVMMemory = "SANDCHECK_VM_MEMORY" // guest memory in MiB (default 1024)
	EnvVMAccel  = "SANDCHECK_VM_ACCEL"  // QEMU accelerator: tcg (default) or kvm
	EnvVMLog    = "SANDCHECK_VM_LOG"    // "1": artifact builds report progress on stderr
)

func init() {
	Register(matrix.KindVM, func(h matrix.Host) (Host, error) {
		cfg := VMConfig{Name: h.Name, Kernel: h.Image, Rootfs: h.Rootfs, Accel: h.Accel, Cache: os.Getenv(EnvVMCache), MemoryMiB: h.MemoryMiB}
		if cfg.Rootfs == "" {
			cfg.Rootfs = os.Getenv(EnvVMRootfs)
		}
		if cfg.Accel == "" {
			cfg.Accel = os.Getenv(EnvVMAccel)
		}
		if v := os.Getenv(EnvVMMemory); v != "" && cfg.MemoryMiB == 0 {
			n, err := strconv.Atoi(v)
			if err != nil || n < 128 {
				return nil, fmt.Errorf("vm host %s: %s=%q: want MiB >= 128", h.Name, EnvVMMemory, v)
			}
			cfg.MemoryMiB = n
		}
		if os.Getenv(EnvVMLog) == "1" {
			cfg.Log = os.Stderr
		}
		return NewVM(cfg)
	})
}

// VMConfig describes a vm host: a Debian kernel booted under QEMU with a root filesystem that
// holds the sandbox.
type VMConfig struct {
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
	Keep      bool      // keep each trial's directory (console log, job) for debugging
}

// VM runs every trial in a fresh VM: one QEMU boot per trial (TCG boots a Debian kernel in a
// few seconds, small next to an srt trial under emulation, and a boot per trial shares no
// kernel state between trials). The job travels by fw_cfg, the result comes back framed with a
// nonce on the second serial port, and the guest powers off; on the deadline the QEMU process
// group is killed.
type VM struct {
	cfg VMConfig

	mu     sync.Mutex
	kernel *vmimage.Kernel
	rootfs *vmimage.Rootfs
	dir    string // per-run: the initramfs with the run's binary, trial dirs
	initrd string
	closed bool
}

// NewVM checks the configuration; Prepare builds or fetches the artifacts.
func NewVM(cfg VMConfig) (*VM, error) {
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
	switch cfg.Accel {
	case "":
		cfg.Accel = "tcg"
	case "tcg", "kvm":
	default:
		return nil, fmt.Errorf("vm host %s: accel %q: want tcg or kvm", cfg.Name, cfg.Accel)
	}
	return &VM{cfg: cfg}, nil
}

// Name implements Host.
func (v *VM) Name() string { return v.cfg.Name }

// Isolation implements Host.
func (v *VM) Isolation() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := "Debian " + v.cfg.Kernel + " kernel"
	if v.kernel != nil {
		k = "kernel " + v.kernel.Release
	}
	return fmt.Sprintf("VM boot per trial (QEMU %s, %s)", strings.ToUpper(v.cfg.Accel), k)
}

// Kernel is the booted kernel (after Prepare).
func (v *VM) Kernel() *vmimage.Kernel {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.kernel
}

// QEMU is the emulator the vm hosts run.
const QEMU = "qemu-system-x86_64"

// Prepare implements Host: the kernel and root filesystem (cached after the first build), and
// this run's initramfs carrying the binary.
func (v *VM) Prepare(ctx context.Context, localBinary string) (string, error) {
	if _, err := exec.LookPath(QEMU); err != nil {
		return "", fmt.Errorf("vm host %s: %s not found (scripts/vm-deps.sh installs qemu-system-x86)", v.Name(), QEMU)
	}
	src, err := linuxBinary(v.cfg.Binary, localBinary)
	if err != nil {
		return "", err
	}
	if m, err := elfMachine(src); err != nil || m != "x86_64" {
		return "", fmt.Errorf("vm host %s: %s is not a linux/amd64 executable (%s %v)", v.Name(), src, m, err)
	}
	b := &vmimage.Builder{Cache: v.cfg.Cache, Log: v.cfg.Log}
	k, err := b.Kernel(ctx, v.cfg.Kernel)
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
	if err := vmimage.RunInitrd(initrd, k, src); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("vm host %s: initramfs: %w", v.Name(), err)
	}
	v.mu.Lock()
	v.kernel, v.rootfs, v.dir, v.initrd = k, r, dir, initrd
	v.mu.Unlock()
	return "/usr/local/bin/sandcheck", nil
}

// Exec implements Host: one boot.
func (v *VM) Exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	start := time.Now()
	r := v.exec(ctx, argv, timeout)
	r.Duration = time.Since(start)
	return r
}

func (v *VM) exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	v.mu.Lock()
	k, rootfs, dir, initrd, closed := v.kernel, v.rootfs, v.dir, v.initrd, v.closed
	v.mu.Unlock()
	switch {
	case closed:
		return Result{Exit: -1, Err: errors.New("host closed")}
	case k == nil:
		return Result{Exit: -1, Err: errors.New("vm host not prepared")}
	}
	td, err := os.MkdirTemp(dir, "trial-")
	if err != nil {
		return Result{Exit: -1, Err: err}
	}
	if !v.cfg.Keep {
		defer os.RemoveAll(td)
	}
	var job strings.Builder
	job.WriteString("#!/bin/sh\nexec env")
	for _, kv := range trialEnv(v.cfg.Env) {
		job.WriteString(" " + shq(kv))
	}
	for _, a := range argv {
		job.WriteString(" " + shq(a))
	}
	job.WriteString("\n")
	var nb [8]byte
	rand.Read(nb[:])
	nonce := hex.EncodeToString(nb[:])
	jobFile, nonceFile := filepath.Join(td, "job.sh"), filepath.Join(td, "nonce")
	console, result := filepath.Join(td, "console.log"), filepath.Join(td, "result.log")
	os.WriteFile(jobFile, []byte(job.String()), 0o644)
	os.WriteFile(nonceFile, []byte(nonce), 0o644)
	kernel := k.Boot
	args := []string{
		"-accel", v.cfg.Accel, "-machine", "pc", "-cpu", "max",
		"-m", strconv.Itoa(v.cfg.MemoryMiB), "-smp", strconv.Itoa(v.cfg.CPUs),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet loglevel=3",
		"-drive", "file=" + rootfs.Image + ",if=virtio,format=raw,readonly=on",
		"-fw_cfg", "name=opt/sandcheck/job,file=" + jobFile,
		"-fw_cfg", "name=opt/sandcheck/nonce,file=" + nonceFile,
		"-serial", "file:" + console, "-serial", "file:" + result,
		"-nic", "none",
	}
	if v.cfg.Accel == "kvm" {
		args[5] = "host"
	}
	cmd := exec.Command(QEMU, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var qout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &qout, &qout
	if err := cmd.Start(); err != nil {
		return Result{Exit: -1, Err: fmt.Errorf("start %s: %w", QEMU, err)}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	res := Result{}
	select {
	case err = <-done:
	case <-ctx.Done():
		res.TimedOut = true
	case <-timer.C:
		res.TimedOut = true
	}
	if res.TimedOut {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	out, _ := os.ReadFile(result)
	jr, ok := vmimage.ParseResult(out, nonce)
	switch {
	case ok:
		res.Stdout, res.Stderr, res.Exit = jr.Stdout, jr.Stderr, jr.Exit
	case res.TimedOut:
		res.Exit = -1
	default:
		res.Exit = -1
		why := "ended without a result"
		if i := bytes.Index(out, []byte("SC-INIT-ERROR ")); i >= 0 {
			why = "init failed: " + strings.TrimSpace(strings.SplitN(string(out[i+len("SC-INIT-ERROR "):]), "\n", 2)[0])
		} else if jr.Begun {
			why = "the guest died during the trial"
		}
		con, _ := os.ReadFile(console)
		res.Err = fmt.Errorf("VM (kernel %s) %s (qemu: %v %s); console: %s", k.Release, why, err, strings.TrimSpace(qout.String()), tail(con, 600))
	}
	return res
}

// Close implements Host.
func (v *VM) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	if v.dir != "" && !v.cfg.Keep {
		return os.RemoveAll(v.dir)
	}
	return nil
}
