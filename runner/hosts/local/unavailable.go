//go:build !linux

package local

import (
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// Kind is the matrix kind of the local host.
const Kind = matrix.KindLocal

// The local kind stays registered elsewhere so that asking for it says why it cannot work.
func init() {
	hosts.RegisterUnavailable(Kind, "kind local runs trials on this machine, and they need Linux (network namespaces, the sandbox); on Windows use a wsl host (matrix/examples/wsl.yaml)")
}
