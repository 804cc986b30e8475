// Package cli is what sandcheck's commands share, as cmd/go's base package is for go's: the
// table of commands, flag sets whose --help shows examples, flags after positional arguments,
// the exit codes, and the reports a command writes with this binary's version and command line.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/runsummary"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
)

// Func runs a command with its arguments (without its name) and returns the exit code.
type Func func(args []string, stdout, stderr io.Writer) int

type command struct {
	summary string
	run     Func
}

var commands = map[string]command{}

// Register makes a command available by name; commands call it from init.
func Register(name, summary string, run Func) { commands[name] = command{summary, run} }

// Lookup finds a command by name.
func Lookup(name string) (Func, bool) {
	c, ok := commands[name]
	return c.run, ok
}

// Usage lists the commands.
func Usage(w io.Writer) {
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

// UserHelp is the --user flag's help, shared by every command that has it.
const UserHelp = "who the sandbox runs as: " + model.UserUnprivileged + " (a dedicated account sandcheck creates: " +
	model.DedicatedUser + "), " + model.UserRoot + ", or an existing account's name"

// Exit codes every command keeps to: a run's (runsummary's, which run and repro document in
// full) and a usage error's.
const (
	ExitPass        = runsummary.ExitPass
	ExitFail        = runsummary.ExitFail
	ExitUsage       = 2 // usage or configuration error: nothing ran
	ExitHarness     = runsummary.ExitHarness
	ExitInterrupted = runsummary.ExitInterrupted
)

// NewFlags makes a flag set whose --help prints the command's usage with examples.
func NewFlags(name, synopsis, examples string, stderr io.Writer) *flag.FlagSet {
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

// Parse handles -h cleanly (exit 0) and reports bad flags (exit 2). Flags may follow
// positional arguments (`report a.jsonl b.jsonl --out DIR`); "--" ends flag parsing.
func Parse(fs *flag.FlagSet, args []string) (ok bool, code int) {
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

// MultiFlag collects a repeatable flag.
type MultiFlag []string

func (m *MultiFlag) String() string     { return strings.Join(*m, ",") }
func (m *MultiFlag) Set(v string) error { *m = append(*m, v); return nil }

// Version is this binary's version and Args its command line, for reports (the main package
// sets both before a command runs).
var (
	Version string
	Args    []string
)

// WriteReports writes the reports of journals into dir (orchestrate.Reports) and returns the
// report model; their Repro section is this invocation.
func WriteReports(dir string, journals []string, stderr io.Writer) (*schema.Report, error) {
	return orchestrate.Reports(dir, journals, Version, CommandLine(Args), stderr)
}

// CommandLine is `sandcheck ARGS` as a shell reads it back: an argument with anything but
// plain characters in single quotes (JSON settings, label expressions, an empty fault).
func CommandLine(args []string) string {
	out := []string{"sandcheck"}
	for _, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
			out = append(out, a)
			continue
		}
		out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(out, " ")
}
