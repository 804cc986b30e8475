package classify

// The rules every classifier (network here, bypass and filesystem below) applies before it
// judges a trial's requests or checks.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// Session is what every classifier reads of a sandboxed run before its checks: whether the
// command ran, what the probe reported, how the sandbox ended.
type Session struct {
	Ran      bool               // SANDBOX-RAN marker seen
	Obs      *probe.Observation // nil when the probe never finished
	ParseErr error              // probe.Parse's complaint about the output (unreadable, forged frame)
	Exit     int                // sandbox exit status
	Stderr   string             // sandbox stderr (tail)
	TimedOut bool
}

// Preconditions are the session's outcome when it keeps the checks from being judged.
func (s Session) Preconditions() (model.Outcome, string, bool) {
	return Preconditions(s.TimedOut, s.ParseErr, s.Ran, s.Obs != nil, s.Exit, s.Stderr)
}

// Preconditions decides the outcomes that keep a trial's checks from being judged: a timeout,
// output that could not be read or trusted, a sandbox that refused to start, a probe that never
// reported. Evidence of egress or an escape is read before them and outweighs them.
func Preconditions(timedOut bool, parseErr error, ran, haveObs bool, exit int, stderr string) (model.Outcome, string, bool) {
	switch {
	case timedOut:
		return model.Timeout, "trial exceeded its deadline", true
	case parseErr != nil:
		return model.HarnessError, "probe output: " + parseErr.Error(), true
	case !ran && exit != 0 && strings.TrimSpace(stderr) != "":
		return model.SandboxFailed, fmt.Sprintf("sandbox exited %d before the command ran: %s", exit, lastWords(stderr)), true
	case !ran:
		return model.HarnessError, fmt.Sprintf("SANDBOX-RAN marker missing (exit %d, no message)", exit), true
	case !haveObs:
		return model.HarnessError, fmt.Sprintf("probe started but never reported (exit %d)", exit), true
	}
	return "", "", false
}

// lastWords is the last line of a sandbox's message that says something: the backtrace a
// runtime prints after it (Rust's frames and notes, Node's "at" lines) says where, not what.
func lastWords(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !backtraceLine.MatchString(l) {
			return l
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// backtraceLine matches what runtimes print after the message: Rust's "stack backtrace:", its
// numbered frames and their "at" lines, its notes; Node's "at" lines.
var backtraceLine = regexp.MustCompile(`^(stack backtrace:|note: |\d+: |at )`)
