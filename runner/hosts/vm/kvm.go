//go:build linux

package vm

import (
	"fmt"
	"os"
)

// KVMDevice is the device QEMU opens for `accel: kvm`.
const KVMDevice = "/dev/kvm"

// checkKVM says, before anything is built or booted, why host cannot run its guests under KVM:
// the device is missing or sandcheck cannot open it read-write, as QEMU must.
func checkKVM(host, device string) error {
	f, err := os.OpenFile(device, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("vm host %s: accel kvm: %w (a KVM runner needs the kvm module loaded and %s readable and writable by sandcheck: "+
			"bare metal, or a VM with nested virtualisation; accel: tcg runs anywhere, slower)", host, err, device)
	}
	return f.Close()
}
