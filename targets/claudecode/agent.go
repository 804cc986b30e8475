package claudecode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/scriptedmodel"
	"github.com/sandcheck/sandcheck/targets"
)

// agent is one run's scripted model, read back once Claude Code has ended: what the Bash tool
// returned.
func agent(srv *scriptedmodel.Server) targets.Agent {
	return &targets.OnceAgent{Stop: srv.Close, Read: func() targets.AgentResult { return Interpret(srv.Report()) }}
}

var (
	// Claude Code puts "Exit code N" first in a failed command's result.
	exitLine = regexp.MustCompile(`^Exit code (-?\d+)\s*(\n|$)`)
	// Newer versions append what the sandbox refused, one line each.
	violations = regexp.MustCompile(`(?s)<sandbox_violations>(.*?)</sandbox_violations>`)
	// An output past Claude Code's limit is saved to a file; the model gets a preview. Claude Code
	// wraps it so, from the result's first byte (2.1.215 and 2.1.332; newer ones carry marker lines
	// such as <artifact-content-authored-by-others/> before the line saying where): anywhere else
	// the tag is the command's own output, which must not make a trial a harness error.
	persisted = regexp.MustCompile(`\A<persisted-output>\n(?:<[a-z-]+/>\n)*` +
		`(Output too large \([^\n]*\)\. Full output saved to: [^\n]+|Output exceeded the [^\n]+ persist limit; only the first [^\n]+ were saved to: [^\n]+)\n` +
		`(?s:.*)</persisted-output>`)
)

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// Interpret turns what the scripted model saw into the run's result: the tool result's content
// as the command's output, its exit status, the sandbox violations Claude Code reported, and as
// harness trouble every request the script did not expect and an output Claude Code cut short.
func Interpret(r scriptedmodel.Report) targets.AgentResult {
	var res targets.AgentResult
	var kinds []string
	for _, q := range r.Requests {
		kinds = append(kinds, q.Kind)
	}
	if len(kinds) > 0 {
		res.Notes = append(res.Notes, "scripted model saw: "+strings.Join(kinds, ", "))
	} else {
		res.Notes = append(res.Notes, "scripted model saw no request")
	}
	for _, u := range r.Unexpected {
		res.Trouble = append(res.Trouble, "scripted model: unexpected request "+u)
	}
	if r.Result == nil {
		return res
	}
	res.Ran, res.Failed = true, r.Result.IsError
	content := r.Result.Content
	res.Output = []byte(content)
	if m := exitLine.FindStringSubmatch(content); m != nil {
		res.Exit, _ = strconv.Atoi(m[1])
	} else if r.Result.IsError {
		res.Exit = 1 // the tool call failed without running a command to give a status
	}
	for _, n := range r.Result.Notices {
		res.Notes = append(res.Notes, "Claude Code told the model: "+firstLine(n))
	}
	for _, v := range violations.FindAllStringSubmatch(content, -1) {
		for _, l := range strings.Split(strings.TrimSpace(v[1]), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				res.Notes = append(res.Notes, "sandbox violation: "+l)
			}
		}
	}
	if m := persisted.FindStringSubmatch(content); m != nil {
		res.Trouble = append(res.Trouble, fmt.Sprintf("Claude Code did not hand back the whole output (%s): the probe's frame was cut",
			strings.TrimSpace(m[1])))
	}
	return res
}
