package hosts

import (
	"fmt"

	"github.com/sandcheck/sandcheck/matrix"
)

// The local kind stays registered on Windows so that asking for it says why it cannot work.
func init() {
	Register(matrix.KindLocal, func(h matrix.Host) (Host, error) {
		return nil, fmt.Errorf("host %q: kind local runs trials on this machine, and they need Linux (network namespaces, the sandbox); on Windows use a wsl host (matrix/examples/wsl.yaml)", h.Name)
	})
}
