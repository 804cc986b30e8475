//go:build !linux

package container

import (
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// Kind is the matrix kind of container hosts.
const Kind = "container"

// The kind stays registered elsewhere so that asking for it says why it cannot work.
func init() {
	hosts.RegisterUnavailable(Kind, "kind container needs a Linux runner (Docker, debootstrap images); on Windows use a wsl host (matrix/examples/wsl.yaml)")
}
