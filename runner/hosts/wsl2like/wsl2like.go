//go:build linux

// Package wsl2like is the wsl2-like host kind: a vm host (QEMU, a Debian kernel) shaped like a
// WSL 2 distribution, to run sandboxes where the seed happened without Windows. The kernel's
// release carries WSL's marker (patched into the image, so /proc/version says it to everyone,
// bubblewrap's own proc included), the trials' directories and so their workspaces live on a
// 9p share from the host mounted at /mnt/c like WSL's drvfs, the interop environment is set, and
// a CPU budget makes start-up as slow as a loaded machine's. Variant wsl1 plays WSL 1, which
// sandboxes must refuse. What it is not: Microsoft's kernel, Hyper-V, Windows' 9p server
// (docs/hosts.md says what differs).
package wsl2like

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/vm"
	"github.com/sandcheck/sandcheck/runner/hosts/vmimage/vminit"
)

// Kind is the matrix kind.
const Kind = "wsl2-like"

// DefaultDistro is WSL_DISTRO_NAME unless the entry names one.
const DefaultDistro = "Debian"

func init() {
	hosts.Register(hosts.Kind{Name: Kind, NpmCache: true, HostKind: matrix.HostKind{
		Keys:     append(append([]string{}, vm.Keys...), "variant", "cpu_percent", "distro", "home_on_drive", "drive_protocol"),
		Settings: func(s *matrix.HostSettings) any { return settings(s) },
	}, New: newFromMatrix})
}

// Config is a wsl2-like entry: the vm keys and WSL's.
type Config struct {
	VM          vm.Config
	Variant     Variant // wsl2 (default) or wsl1
	CPUPercent  int     // the guest's trials get this share of one CPU (0: no limit)
	Distro      string  // WSL_DISTRO_NAME
	HomeOnDrive bool    // accounts' HOME on the drive too (/home bound to C:\Users\home)
	// DriveProtocol is the drive's 9p protocol: Drive9P2000L (default: drvfs's semantics) or
	// Drive9P2000U (statfs says 9p, as on WSL 2, but fsync hangs: see Drive9P2000U).
	DriveProtocol string
}

func settings(s *matrix.HostSettings) Config {
	c := Config{
		VM:            vm.Settings(s),
		Variant:       Variant(s.OneOf("variant", string(WSL2), string(WSL1))),
		CPUPercent:    s.PositiveInt("cpu_percent", "the percent of one CPU the guest's trials get"),
		Distro:        s.Optional("distro", "the WSL distribution's name (WSL_DISTRO_NAME)"),
		HomeOnDrive:   s.Bool("home_on_drive"),
		DriveProtocol: s.OneOf("drive_protocol", Drive9P2000L, Drive9P2000U),
	}
	if c.CPUPercent > 100*64 {
		s.Errorf("cpu_percent", "%d%%: more than the guest could use", c.CPUPercent)
	}
	return c
}

func newFromMatrix(h matrix.Host, o hosts.Options) (hosts.Host, error) {
	c, _ := h.Settings.(Config)
	vc, err := vm.WithDefaults(h.Name, c.VM)
	if err != nil {
		return nil, err
	}
	c.VM = vc
	return New(c)
}

// Host is a wsl2-like host: its vm host, built at Prepare once the drive exists.
type Host struct {
	cfg   Config
	vm    *vm.Host
	drive string // the host directory shared as C:
}

// New checks the configuration (the vm host is built at Prepare).
func New(c Config) (*Host, error) {
	switch c.Variant {
	case "":
		c.Variant = WSL2
	case WSL2, WSL1:
	default:
		return nil, fmt.Errorf("wsl2-like host %s: variant %q: want wsl2 or wsl1", c.VM.Name, c.Variant)
	}
	if c.Distro == "" {
		c.Distro = DefaultDistro
	}
	switch c.DriveProtocol {
	case "":
		c.DriveProtocol = Drive9P2000L
	case Drive9P2000U, Drive9P2000L:
	default:
		return nil, fmt.Errorf("wsl2-like host %s: drive_protocol %q: want %s or %s", c.VM.Name, c.DriveProtocol, Drive9P2000L, Drive9P2000U)
	}
	if c.CPUPercent < 0 {
		return nil, fmt.Errorf("wsl2-like host %s: cpu_percent %d: want 1 or more", c.VM.Name, c.CPUPercent)
	}
	if c.VM.Name == "" {
		c.VM.Name = Kind
	}
	return &Host{cfg: c}, nil
}

// Name implements hosts.Host.
func (h *Host) Name() string { return h.cfg.VM.Name }

// Isolation implements hosts.Host: what plays WSL here, then the vm host's own account.
func (h *Host) Isolation() string {
	if h.vm != nil {
		return h.vm.Isolation()
	}
	return h.describe()
}

func (h *Host) describe() string {
	d := fmt.Sprintf("%s-like (Debian %s kernel, release suffix %q; trials' workspaces on a %s drive at %s", map[Variant]string{WSL2: "WSL2", WSL1: "WSL1"}[h.cfg.Variant],
		h.cfg.VM.Kernel, h.cfg.Variant.ReleaseSuffix(), h.cfg.DriveProtocol, DriveDir)
	if h.cfg.DriveProtocol == Drive9P2000U {
		d += "; fsync on the drive hangs"
	}
	if h.cfg.CPUPercent > 0 {
		d += fmt.Sprintf("; CPU budget %d%% of one CPU", h.cfg.CPUPercent)
	}
	return d + ")"
}

// Prepare implements hosts.Host: the drive on the host, then the vm host that shares it.
func (h *Host) Prepare(ctx context.Context, localBinary string) (string, error) {
	if h.vm != nil {
		return "", errors.New("wsl2-like host prepared twice")
	}
	drive, err := os.MkdirTemp("", "sandcheck-drive-")
	if err != nil {
		return "", err
	}
	h.drive = drive
	// The drive's root is the guest's /mnt/c: everyone may enter it, as a Windows drive's.
	if err := os.Chmod(drive, 0o755); err != nil {
		return "", err
	}
	c := h.cfg.VM
	c.ReleaseSuffix = h.cfg.Variant.ReleaseSuffix()
	c.Shares = append(append([]vminit.Share{}, c.Shares...), vminit.Share{Tag: DriveTag, HostDir: drive, GuestDir: DriveDir, Options: DriveOptions(h.cfg.DriveProtocol)})
	c.Setup = Setup(h.cfg.HomeOnDrive)
	c.CPUBudget = float64(h.cfg.CPUPercent) / 100
	c.Describe = h.describe()
	env := Env(h.cfg.Distro)
	for k, v := range c.Env {
		env[k] = v // the caller's word (SANDCHECK_PASSENV) wins
	}
	c.Env = env
	v, err := vm.New(c)
	if err != nil {
		return "", err
	}
	h.vm = v
	return v.Prepare(ctx, localBinary)
}

var _ hosts.Execer = (*Host)(nil)

// Exec implements hosts.Execer.
func (h *Host) Exec(ctx context.Context, c hosts.Command, timeout time.Duration) hosts.Result {
	if h.vm == nil {
		return hosts.Result{Exit: -1, Err: errors.New("wsl2-like host not prepared")}
	}
	return h.vm.Exec(ctx, c, timeout)
}

// VM is the vm host underneath (after Prepare).
func (h *Host) VM() *vm.Host { return h.vm }

// Close implements hosts.Host: the guests, then the drive.
func (h *Host) Close() error {
	var err error
	if h.vm != nil {
		err = h.vm.Close()
	}
	if h.drive != "" {
		if rerr := os.RemoveAll(h.drive); err == nil {
			err = rerr
		}
		h.drive = ""
	}
	return err
}
