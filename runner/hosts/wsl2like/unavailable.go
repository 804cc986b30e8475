//go:build !linux

package wsl2like

import (
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// Kind is the matrix kind.
const Kind = "wsl2-like"

// The kind stays registered elsewhere so that asking for it says why it cannot work.
func init() {
	hosts.RegisterUnavailable(Kind, "kind wsl2-like needs a Linux runner (QEMU, Debian kernels); on Windows use a wsl host (matrix/examples/wsl.yaml)")
}
