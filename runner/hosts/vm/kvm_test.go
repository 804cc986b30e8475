//go:build linux

package vm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// accel: kvm, which no machine here has: the KVM device is checked before anything is built or
// booted, with a stand-in for /dev/kvm; a host without it is refused naming what a KVM runner
// needs; and QEMU is asked for KVM with the host's CPU, TCG with the emulated one.
func TestKVMNeedsItsDevice(t *testing.T) {
	dir := t.TempDir()
	standIn := filepath.Join(dir, "kvm")
	err := checkKVM("k", filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "vm host k: accel kvm") || !strings.Contains(err.Error(), "a KVM runner") {
		t.Errorf("no KVM device: %v, want a refusal naming the host and what a KVM runner needs", err)
	}
	if err := os.WriteFile(standIn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkKVM("k", standIn); err != nil {
		t.Errorf("a KVM device that opens read-write: %v", err)
	}
	if err := os.Chmod(standIn, 0o400); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root opens it anyway
		if err := checkKVM("k", standIn); err == nil {
			t.Error("a KVM device sandcheck cannot write was accepted")
		}
	}
	for accel, cpu := range map[string]string{"kvm": "host", "tcg": "max"} {
		h, err := New(Config{Name: "k", Kernel: "bookworm", Accel: accel})
		if err != nil {
			t.Fatal(err)
		}
		args := h.qemuArgs("/k/vmlinuz", "/k/initrd", "/k/rootfs", "/k/nonce", "/k/g", nil)
		if i := slices.Index(args, "-accel"); i < 0 || args[i+1] != accel {
			t.Errorf("accel %s: %q", accel, args)
		}
		if i := slices.Index(args, "-cpu"); i < 0 || args[i+1] != cpu {
			t.Errorf("accel %s: -cpu wants %s: %q", accel, cpu, args)
		}
	}
}
