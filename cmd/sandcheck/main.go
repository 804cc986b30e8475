// Command sandcheck drives real sandboxes through conformance scenarios and measures how often
// they fail. One binary holds the runner and the compiled specs, so a host needs only this file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// Version is set at build time (-ldflags "-X main.Version=...").
var Version = "dev"

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	commands[name] = command{summary, run}
}

func main() {
	probe.MaybeRun()   // the same binary is the probe inside the sandbox
	vmagent.MaybeRun() // and the job agent inside a vm host's guest
	args := os.Args[1:]
	if len(args) == 1 && args[0] == runner.SpareArg {
		args = awaitTrial() // started ahead of its trial by the runner
	}
	os.Exit(dispatch(args, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	reproArgs = args
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sandcheck: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "sandcheck: conformance tests and flake rates for OS sandboxes (srt, ...)")
	fmt.Fprintln(w, "\nUsage: sandcheck COMMAND [flags]   (sandcheck COMMAND --help for details)")
	fmt.Fprintln(w, "\nCommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

// newFlags makes a flag set whose --help prints the command's usage with examples.
func newFlags(name, synopsis, examples string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: sandcheck %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(stderr, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// parse handles -h cleanly (exit 0) and reports bad flags (exit 2). Flags may follow
// positional arguments (`report a.jsonl b.jsonl --out DIR`); "--" ends flag parsing.
func parse(fs *flag.FlagSet, args []string) (ok bool, code int) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return false, 0
			}
			return false, 2
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	fs.Parse(append([]string{"--"}, positional...))
	return true, 0
}

func init() {
	register("version", "print the version", func(args []string, stdout, _ io.Writer) int {
		fmt.Fprintf(stdout, "sandcheck %s\n", Version)
		return 0
	})
}
