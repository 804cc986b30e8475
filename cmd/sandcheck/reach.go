//go:build linux

package main

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/suites/harness"
)

// refuseUnreachable checks, before anything runs, what the caller hands the sandbox's user of
// cfg (harness.CallerReach), prints the warnings if warn (not preflight's one line), and returns
// cli.ExitUsage with the refusal when the trial would test something other than asked.
func refuseUnreachable(cmd string, cfg harness.Config, warn bool, stderr io.Writer) int {
	r := harness.CallerReach(cfg)
	for _, w := range r.Warn {
		if warn {
			fmt.Fprintf(stderr, "sandcheck %s: warning: %s\n", cmd, w)
		}
	}
	if err := r.Err(); err != nil {
		fmt.Fprintf(stderr, "sandcheck %s: %v\n", cmd, err)
		return cli.ExitUsage
	}
	return 0
}
