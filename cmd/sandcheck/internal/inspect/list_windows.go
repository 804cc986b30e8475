package inspect

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
)

// The scenarios are the specs, which are built on Linux only; here the name stays and says
// where the list is.
func init() {
	cli.Register("list", "list the scenarios (Linux only; docs/scenarios.md has them)", func(_ []string, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "sandcheck: `sandcheck list` runs inside Linux; on Windows read docs/scenarios.md, or run it in a wsl host\n")
		return 2
	})
}
