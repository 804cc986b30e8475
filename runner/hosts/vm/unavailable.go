//go:build !linux

package vm

import (
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// Kind is the matrix kind of vm hosts.
const Kind = "vm"

// The kind stays registered elsewhere so that asking for it says why it cannot work.
func init() {
	hosts.RegisterUnavailable(Kind, "kind vm needs a Linux runner (QEMU, Debian kernels); on Windows use a wsl host (matrix/examples/wsl.yaml)")
}
