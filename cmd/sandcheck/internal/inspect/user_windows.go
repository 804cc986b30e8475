package inspect

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
)

// The sandbox's user lives inside the WSL distribution, where `sandcheck user` runs; here the
// name stays and says so.
func init() {
	cli.Register("user", "show (and create) the account sandboxes run as (Linux only)", func(_ []string, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "sandcheck: `sandcheck user` runs inside Linux; on Windows use a wsl host (matrix/examples/wsl.yaml)\n")
		return 2
	})
}
