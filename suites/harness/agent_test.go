//go:build linux

package harness

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// What comes back through an agent reaches the classifier as any other run's output would.
func TestThroughAgent(t *testing.T) {
	frame := "SANDCHECK-SANDBOX-RAN n1\n"
	cases := []struct {
		name    string
		run     proc.Run
		agent   targets.AgentResult
		exit    int
		last    string // stderr's last line: what the classifier quotes
		stdout  string
		trouble bool
		outcome model.Outcome // of preconditions, for the no-observation cases
	}{
		{"tool ran", proc.Run{Exit: 0, Stdout: []byte("done\n")}, targets.AgentResult{Ran: true, Output: []byte(frame)}, 0,
			"agent exit 0; the command's exit as the agent reported it: 0", frame, false, model.HarnessError},
		{"tool refused", proc.Run{Exit: 0, Stdout: []byte("done")}, targets.AgentResult{Ran: true, Failed: true, Exit: 1,
			Output: []byte("Error: sandbox required but unavailable")}, 1, "tool result: Error: sandbox required but unavailable", "Error: sandbox required but unavailable", false, model.SandboxFailed},
		{"agent refused to start", proc.Run{Exit: 1, Stderr: "sandbox required but unavailable: refusing to start\n"}, targets.AgentResult{Notes: []string{"scripted model saw no request"}},
			1, "sandbox required but unavailable: refusing to start", "", false, model.SandboxFailed},
		{"unexpected request", proc.Run{Exit: 0}, targets.AgentResult{Trouble: []string{"scripted model: unexpected request GET /x"}}, 0, "", "", true, model.HarnessError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.run
			err := throughAgent(&r, c.agent)
			if (err != nil) != c.trouble {
				t.Fatalf("trouble %v, want %v", err, c.trouble)
			}
			if r.Exit != c.exit || string(r.Stdout) != c.stdout {
				t.Fatalf("exit %d stdout %q", r.Exit, r.Stdout)
			}
			lines := strings.Split(r.Stderr, "\n")
			if c.last != "" && lines[len(lines)-1] != c.last {
				t.Fatalf("stderr ends %q, want %q:\n%s", lines[len(lines)-1], c.last, r.Stderr)
			}
			out, _ := probe.Parse(r.Stdout, "n1")
			o := classifyPre(err, out.Ran, r.Exit, r.Stderr)
			if o != c.outcome {
				t.Fatalf("outcome %s, want %s", o, c.outcome)
			}
		})
	}
}

// classifyPre runs the classifier's preconditions on a run with no observation.
func classifyPre(parseErr error, ran bool, exit int, stderr string) model.Outcome {
	return classify.ClassifyNetwork(classify.Network{Session: classify.Session{Ran: ran, ParseErr: parseErr, Exit: exit, Stderr: stderr}, Reach: []string{model.ChanHTTP}}).Outcome
}
