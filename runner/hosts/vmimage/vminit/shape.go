//go:build linux

package vminit

// What a boot is given beyond its nonce, each optional: directories of the host shared over
// virtio-9p, a setup script, a CPU budget. They travel as fw_cfg items (opt/sandcheck/NAME) that
// Init copies into the new root and Stage2 acts on before the agent starts.

import (
	"fmt"
	"regexp"
	"strings"
)

// fw_cfg item names (opt/sandcheck/NAME).
const (
	FwMounts = "mounts" // the 9p shares, "TAG DIR OPTIONS" a line (MountsFile)
	FwSetup  = "setup"  // a shell script Stage2 runs as root before the agent; failing fails the boot
	FwCPUMax = "cpumax" // cgroup v2 cpu.max ("QUOTA PERIOD") of the agent and all it starts (CPUMax)
)

// Share is a directory of the host that the guest mounts over virtio-9p.
type Share struct {
	Tag      string // 9p mount tag (letters, digits, _ and -)
	HostDir  string
	GuestDir string // absolute, no spaces; made in the guest if missing
	ReadOnly bool
	// Model is QEMU's security_model: mapped-xattr keeps the guest's owners and modes in
	// extended attributes of the host's files (which stay the user's running QEMU: no setuid file
	// the guest made ever lands on the host as such); none keeps the host's own.
	Model string // default mapped-xattr
	// Options are the v9fs mount options besides trans=virtio (default: 9p2000.L, msize 256 KiB).
	Options string
}

var shareTag = regexp.MustCompile(`^[A-Za-z0-9_-]{1,31}$`)

func (s Share) check() error {
	switch {
	case !shareTag.MatchString(s.Tag):
		return fmt.Errorf("share tag %q: want 1-31 letters, digits, _ or -", s.Tag)
	case s.HostDir == "" || strings.ContainsAny(s.HostDir, ","):
		return fmt.Errorf("share %s: host directory %q: want a path without commas (QEMU's option syntax)", s.Tag, s.HostDir)
	case !strings.HasPrefix(s.GuestDir, "/") || strings.ContainsAny(s.GuestDir, " \t\n"):
		return fmt.Errorf("share %s: guest directory %q: want an absolute path without spaces", s.Tag, s.GuestDir)
	case strings.ContainsAny(s.Options, " \t\n"):
		return fmt.Errorf("share %s: options %q: no spaces", s.Tag, s.Options)
	}
	return nil
}

// QEMUArgs are the emulator arguments that export the share.
func (s Share) QEMUArgs() ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	model := s.Model
	if model == "" {
		model = "mapped-xattr"
	}
	dev := fmt.Sprintf("local,id=fs-%s,path=%s,security_model=%s", s.Tag, s.HostDir, model)
	if s.ReadOnly {
		dev += ",readonly=on"
	}
	return []string{"-fsdev", dev, "-device", fmt.Sprintf("virtio-9p-pci,fsdev=fs-%s,mount_tag=%s", s.Tag, s.Tag)}, nil
}

// DefaultShareOptions are the v9fs options of a share that names none.
const DefaultShareOptions = "version=9p2000.L,msize=262144"

// MountsFile is the FwMounts item for shares.
func MountsFile(shares []Share) ([]byte, error) {
	var b strings.Builder
	for _, s := range shares {
		if err := s.check(); err != nil {
			return nil, err
		}
		opts := s.Options
		if opts == "" {
			opts = DefaultShareOptions
		}
		if s.ReadOnly {
			opts += ",ro"
		}
		fmt.Fprintf(&b, "%s %s %s\n", s.Tag, s.GuestDir, opts)
	}
	return []byte(b.String()), nil
}

// cpuPeriod is the cgroup period of a CPU budget, in microseconds.
const cpuPeriod = 100000

// CPUMax is the FwCPUMax item for a budget: the fraction of one CPU everything in the guest's
// user space may use (0 < budget; above the guest's CPUs it limits nothing).
func CPUMax(budget float64) ([]byte, error) {
	if !(budget > 0) || budget > 64 {
		return nil, fmt.Errorf("cpu budget %v: want a fraction of a CPU above 0 (e.g. 0.25)", budget)
	}
	quota := int(budget * cpuPeriod)
	if quota < 1000 {
		return nil, fmt.Errorf("cpu budget %v: below 1%% of a CPU the guest cannot boot its agent", budget)
	}
	return []byte(fmt.Sprintf("%d %d\n", quota, cpuPeriod)), nil
}
