//go:build linux

package harness

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/targets"
)

// throughAgent turns a run whose command went through an agent's tool call (targets.Agent) into
// the run of that command, as the classifier reads any other: stdout is what the agent handed
// back as the command's output, the exit status is the one it reported, and the agent's own
// stdout, stderr and exit stay as evidence in stderr. Harness trouble the agent saw (an unexpected
// request to the scripted model, a cut-short result) is returned as an error, so the trial is a
// harness error naming it, never a verdict. When the agent returned no result, the agent's own
// exit status and stderr stand: its refusal to start is the sandbox's loud failure.
func throughAgent(r *proc.Run, a targets.AgentResult) error {
	var ev []string
	if s := strings.TrimSpace(string(r.Stdout)); s != "" {
		ev = append(ev, "agent stdout: "+firstLine(s))
	}
	for _, n := range a.Notes {
		ev = append(ev, "agent: "+n)
	}
	if a.Ran {
		ev = append(ev, fmt.Sprintf("agent exit %d; the command's exit as the agent reported it: %d", r.Exit, a.Exit))
		r.Exit = a.Exit
		r.Stdout = a.Output
		if a.Exit != 0 || a.Failed {
			// The tool result's last line is the sandbox's word when the command never ran.
			ev = append(ev, "tool result: "+lastNonEmpty(string(a.Output)))
		}
	} else {
		r.Stdout = nil
	}
	// The classifier quotes stderr's last line: the tool result's when the agent returned one,
	// else the agent's own message.
	own := strings.TrimSpace(r.Stderr)
	parts := append([]string{own}, ev...)
	if !a.Ran {
		parts = append(ev, own)
	}
	r.Stderr = strings.TrimSpace(strings.Join(parts, "\n"))
	if len(a.Trouble) == 0 {
		return nil
	}
	return errors.New(strings.Join(a.Trouble, "; "))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func lastNonEmpty(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
