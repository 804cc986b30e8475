package main

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
)

// restartClocks: nothing on Windows, where no trial runs in this process.
func restartClocks() {}

// The commands that run the specs need Linux (network namespace fixtures, a Linux sandbox), so
// trial.go and preflight.go are built there only. On Windows the same names stay, and say where
// they do run: inside a WSL distribution, which `run` reaches through a wsl host.
func init() {
	for _, c := range []struct{ name, summary string }{
		{"trial", "run the specs once, in this process (Linux only)"},
		{"preflight", "one fast network trial with your settings (Linux only)"},
	} {
		cli.Register(c.name, c.summary, func(_ []string, _, stderr io.Writer) int {
			fmt.Fprintf(stderr, "sandcheck: `sandcheck %s` runs inside Linux; on Windows use a wsl host (matrix/examples/wsl.yaml)\n", c.name)
			return 2
		})
	}
}
