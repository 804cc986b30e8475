package classify

// The rules every classifier (network here, bypass and filesystem below) applies before it
// judges a trial's requests or checks.

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

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
		return model.SandboxFailed, fmt.Sprintf("sandbox exited %d before the command ran: %s", exit, lastLine(stderr)), true
	case !ran:
		return model.HarnessError, fmt.Sprintf("SANDBOX-RAN marker missing (exit %d, no message)", exit), true
	case !haveObs:
		return model.HarnessError, fmt.Sprintf("probe started but never reported (exit %d)", exit), true
	}
	return "", "", false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
