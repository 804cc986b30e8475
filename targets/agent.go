package targets

import "sync"

// Agent is what an adapter runs beside its sandbox when the sandbox is reached through an
// agent's tool call rather than a command line (Claude Code's Bash tool): a scripted model that
// asks the agent to run the session's command. The command's output then comes back inside the
// agent's tool result, not on the invocation's stdout. The harness calls Finish once the
// invocation's process has ended (or was killed), and on every error path after Prepare.
type Agent interface {
	Finish() AgentResult
}

// AgentResult is what came back through the agent.
type AgentResult struct {
	// Ran says the agent handed back a result of the command: it ran it, or tried to and said
	// why not (a refusal is a result too). False when the agent never returned one.
	Ran bool `json:"ran"`
	// Output is the command's output as the agent returned it: where the probe's frame is read.
	Output []byte `json:"-"`
	// Exit is the command's exit status as the agent reported it (meaningful when Ran).
	Exit int `json:"exit"`
	// Failed is the agent's word that the tool call failed (is_error), whatever the status.
	Failed bool `json:"failed,omitempty"`
	// Trouble is harness trouble, never a verdict on the sandbox: requests the scripted model did
	// not expect, a result the agent cut short.
	Trouble []string `json:"trouble,omitempty"`
	// Notes are evidence lines: the agent's own view of its sandbox (violations it reported,
	// warnings it printed), the requests it made.
	Notes []string `json:"notes,omitempty"`
}

// OnceAgent is an Agent whose Finish stops what ran beside the sandbox (a scripted model) and
// reads what came back through it, once: later calls return the same result.
type OnceAgent struct {
	Stop func()
	Read func() AgentResult
	once sync.Once
	res  AgentResult
}

// Finish implements Agent.
func (a *OnceAgent) Finish() AgentResult {
	a.once.Do(func() {
		a.Stop()
		a.res = a.Read()
	})
	return a.res
}
