package runsummary

import (
	"fmt"
	"io"
)

// Exit codes of a run, as `sandcheck run --help` lists them (2, a usage error, is the command's).
const (
	ExitPass        = 0   // every scenario passed; failures covered by known findings allowed
	ExitFail        = 1   // a fail-open, or a scenario failure outside the known findings
	ExitHarness     = 3   // harness errors or timeouts above the bound
	ExitInterrupted = 130 // Ctrl-C or SIGTERM; finished trials are journaled
)

// Ending is how a run ends: its exit code and why.
type Ending struct {
	Code    int
	Reasons []string
}

// End gives a verdict its exit code. An interrupted run keeps what it showed so far, in words,
// under exit 130; a run that stopped early (stopped, the runner's error) where every scenario had
// passed so far is harness trouble.
func End(v Verdict, interrupted bool, stopped error) Ending {
	e := Ending{ExitPass, nil}
	switch v.Kind {
	case Fail:
		e = Ending{ExitFail, v.Reasons}
	case Harness:
		e = Ending{ExitHarness, v.Reasons}
	}
	switch {
	case interrupted:
		e = Ending{ExitInterrupted, append([]string{"interrupted; so far: " + e.String()}, e.Reasons...)}
	case stopped != nil && e.Code == ExitPass:
		e = Ending{ExitHarness, []string{"the run stopped early: " + stopped.Error()}}
	}
	return e
}

// String names the exit code in words.
func (e Ending) String() string {
	switch e.Code {
	case ExitPass:
		return "exit 0 (nothing failed outside the known findings)"
	case ExitFail:
		return "exit 1 (fail-open or failure outside the known findings)"
	case ExitHarness:
		return "exit 3 (harness errors or timeouts above the bound)"
	}
	return fmt.Sprintf("exit %d", e.Code)
}

// WriteEnding writes the run's last lines: its exit code and each reason.
func WriteEnding(w io.Writer, e Ending) {
	if e.Code == ExitPass {
		fmt.Fprintln(w, "exit 0: nothing failed outside the known findings (they are still failures: the gate passes one only if its policy accepts it by id)")
		return
	}
	for _, r := range e.Reasons {
		fmt.Fprintf(w, "exit %d: %s\n", e.Code, r)
	}
}
