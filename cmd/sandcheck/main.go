// Command sandcheck drives real sandboxes through conformance scenarios and measures how often
// they fail. One binary holds the runner and the compiled specs, so a host needs only this file.
//
// The commands that run trials (run, trial, preflight, repro, bisect) are in this package; those
// that describe this machine and build (internal/inspect) and those over journals and reports
// (internal/reportcmd) are packages of their own; internal/cli is what they share.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	_ "github.com/sandcheck/sandcheck/cmd/sandcheck/internal/inspect" // doctor, user, faults, versions
	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/proxyverb"
	_ "github.com/sandcheck/sandcheck/cmd/sandcheck/internal/reportcmd" // report, compare, gate
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
	"github.com/sandcheck/sandcheck/runner/process"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// Version is set at build time (-ldflags "-X main.Version=...").
var Version = "dev"

func main() {
	probe.MaybeRun()     // the same binary is the probe inside the sandbox
	vmagent.MaybeRun()   // and the job agent inside a vm host's guest
	proxyverb.MaybeRun() // and a bad-proxy reproducer's PROXY
	args := os.Args[1:]
	if len(args) == 1 && args[0] == process.SpareArg {
		args = awaitTrial() // started ahead of its trial by the runner
	}
	os.Exit(dispatch(args, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		cli.Usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	cli.Version, cli.Args = Version, args
	run, ok := cli.Lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "sandcheck: unknown command %q\n\n", args[0])
		cli.Usage(stderr)
		return 2
	}
	return run(args[1:], stdout, stderr)
}

func init() {
	cli.Register("version", "print the version", func(args []string, stdout, _ io.Writer) int {
		fmt.Fprintf(stdout, "sandcheck %s\n", Version)
		return 0
	})
}
