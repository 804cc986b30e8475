package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/scriptedmodel"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// ExecName is the target that drives Codex as its users run it: `codex exec PROMPT`, the agent
// asked by a scripted model (a Responses API stand-in on loopback; the real model cannot run
// here) to run the probe with its shell tool, so the probe runs in the sandbox Codex's agent
// gives its commands, under the agent's own sandbox and approval mode (the setting `mode`).
const ExecName = "codex-exec"

// The agent's modes: how `codex exec` is asked to sandbox its commands.
const (
	// ModeProfile: the permissions profile the codex target uses (the allow-list proxy), as -c
	// overrides; approvals never asked (exec's own default).
	ModeProfile = "profile"
	// ModeWorkspaceWrite: `-s workspace-write`: the workspace writable, network off.
	ModeWorkspaceWrite = "workspace-write"
	// ModeReadOnly: `-s read-only`: nothing writable, network off.
	ModeReadOnly = "read-only"
	// ModeFullAuto: Codex's low-friction preset: `--full-auto` (workspace-write, approvals on
	// request) where the build has it, `--approve-for-me` (approvals routed to automatic review,
	// workspace-write) in the releases that replaced it (0.171.0 refuses --full-auto).
	ModeFullAuto = "full-auto"
	// ModeDangerFullAccess: `-s danger-full-access`: no sandbox, by the sandbox flag.
	ModeDangerFullAccess = "danger-full-access"
	// ModeBypass: `--dangerously-bypass-approvals-and-sandbox` beside the profile: no sandbox at
	// all, whatever the profile says. The policy the user wrote is not enforced: the known-bad.
	ModeBypass = "bypass"
)

// ExecModes lists the modes in the order the docs' table shows them.
var ExecModes = []string{ModeProfile, ModeWorkspaceWrite, ModeReadOnly, ModeFullAuto, ModeDangerFullAccess, ModeBypass}

// ExecPrompt is the user's turn; the scripted model answers it with the probe whatever it says.
const ExecPrompt = "Run the sandcheck probe with your shell tool."

func init() {
	targets.Register(ExecName, func(s map[string]string) (targets.Target, error) { return NewExec(s["path"], s["mode"]) })
	targets.RegisterCheck(ExecName, func(s map[string]string) error { _, err := execMode(s["mode"]); return err })
	targets.RegisterNPM(ExecName, targets.NPM{Package: "@openai/codex", Bin: "codex", IgnoreScripts: true})
}

func execMode(s string) (string, error) {
	if s == "" {
		return ModeProfile, nil
	}
	for _, m := range ExecModes {
		if s == m {
			return s, nil
		}
	}
	return "", fmt.Errorf("codex-exec settings.mode: %q is not one of %s", s, strings.Join(ExecModes, ", "))
}

// Exec is the codex-exec adapter.
type Exec struct {
	*Target
	mode     string
	autoOnce sync.Once
	auto     string // the build's low-friction flag (ModeFullAuto)
}

// autoFlag asks the build's `codex exec --help` which low-friction flag it has.
func (e *Exec) autoFlag() string {
	e.autoOnce.Do(func() {
		e.auto = "--approve-for-me"
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(ctx, e.Path(), "exec", "--help").CombinedOutput()
		if strings.Contains(string(out), "--full-auto") {
			e.auto = "--full-auto"
		}
	})
	return e.auto
}

// NewExec finds codex as New does; mode is the agent's mode ("" for the profile).
func NewExec(path, mode string) (*Exec, error) {
	m, err := execMode(mode)
	if err != nil {
		return nil, err
	}
	t, err := New(path)
	if err != nil {
		return nil, err
	}
	if m != ModeProfile && m != ModeBypass {
		t.network = NetworkDenyAll // the -s modes are the legacy all-or-nothing network
	}
	return &Exec{Target: t, mode: m}, nil
}

func (e *Exec) Name() string { return ExecName }

// Mode is the agent's mode.
func (e *Exec) Mode() string { return e.mode }

// Capabilities are what the mode promises: the profile's allow-list (the bypass mode is given
// the same profile, and must keep its promise), or network off, and the workspace writable but
// in read-only mode.
func (e *Exec) Capabilities() []model.Capability {
	switch e.mode {
	case ModeReadOnly:
		return []model.Capability{model.CapDenyAllNet}
	case ModeWorkspaceWrite, ModeFullAuto, ModeDangerFullAccess:
		// danger-full-access: what the user would expect of the workspace-write sandbox it
		// replaces, network off.
		return []model.Capability{model.CapDenyAllNet, model.CapWritablePaths}
	}
	return []model.Capability{model.CapProxyAllowList, model.CapWritablePaths}
}

// Prepare starts the scripted model and returns `codex exec [mode] -c provider... PROMPT`, run in
// the workspace. The invocation's Agent hands back what the shell tool returned.
func (e *Exec) Prepare(s *targets.Session) (*targets.Invocation, error) {
	env, cfg, err := e.configure(s)
	if err != nil {
		return nil, err
	}
	overrides := Overrides(cfg)
	ln, err := s.Loopback()
	if err != nil {
		return nil, fmt.Errorf("scripted model: listen: %w", err)
	}
	srv := scriptedmodel.ServeResponses(ln, scriptedmodel.Script{Command: targets.ShellJoin(s.Command)})
	argv := []string{e.Path(), "exec", "--skip-git-repo-check", "--color", "never",
		"-c", `model_provider="sandcheck"`,
		"-c", fmt.Sprintf(`model_providers.sandcheck={name="sandcheck",base_url=%q,wire_api="responses"}`, srv.URL()+"/v1"),
		"-m", "sandcheck-scripted"}
	argv = append(argv, Quiet...)
	switch e.mode {
	case ModeProfile, ModeBypass:
		argv = append(argv, overrides...)
		if e.mode == ModeBypass {
			argv = append(argv, "--dangerously-bypass-approvals-and-sandbox")
		}
	case ModeFullAuto:
		// The preset's workspace-write, with the policy's writable roots and /tmp excluded
		// (Codex's own default adds /tmp, where trial directories are).
		argv = append(append(argv, overrides...), e.autoFlag())
	case ModeWorkspaceWrite:
		argv = append(append(argv, overrides...), "-s", e.mode)
	default:
		argv = append(argv, "-s", e.mode)
	}
	argv = append(argv, ExecPrompt)
	b, _ := json.MarshalIndent(cfg, "", "  ")
	settings := string(b)
	switch e.mode {
	case ModeReadOnly, ModeDangerFullAccess:
		settings = fmt.Sprintf("%q (codex exec's own mode, nothing else given)", e.mode)
	}
	return &targets.Invocation{Argv: argv, Env: env, Dir: s.Workspace, Settings: settings, Agent: execAgent(srv)}, nil
}

// Quiet are the overrides that keep the agent's own traffic off the network: left on, Codex
// 0.171 resolves github.com and api.github.com (its plugins and skills), chatgpt.com and
// ab.chatgpt.com (analytics) from the host side as it starts, seen here on the fixture's
// resolver. A trial's egress must be the sandbox's only.
var Quiet = []string{
	"-c", "check_for_update_on_startup=false",
	"-c", "analytics.enabled=false",
	"-c", "features.plugins=false",
	"-c", "features.remote_plugin=false",
	"-c", "features.plugin_sharing=false",
	"-c", "features.apps=false",
}

// execAgent is one run's scripted model, read back once Codex has ended: what the shell tool
// returned.
func execAgent(srv *scriptedmodel.Server) targets.Agent {
	return &targets.OnceAgent{Stop: srv.Close, Read: func() targets.AgentResult { return InterpretExec(srv.Report()) }}
}

var (
	// exec_command's output opens with a header ending in "Output:"; the exit status is in it.
	execExit   = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$`)
	execOutput = regexp.MustCompile(`(?sm)\AChunk ID: [^\n]*\n.*?^Output:\n(.*)\z`)
	// An output past Codex's limit is cut and marked.
	execCut = regexp.MustCompile(`(?m)(tokens truncated|Total output lines: \d+)`)
)

// InterpretExec turns what the scripted model saw into the run's result: the output of the
// shell tool (past its header) as the command's output, its exit status, and as harness trouble
// every request the script did not expect and an output Codex cut short.
func InterpretExec(r scriptedmodel.Report) targets.AgentResult {
	var res targets.AgentResult
	var kinds []string
	for _, q := range r.Requests {
		kinds = append(kinds, q.Kind)
	}
	if len(kinds) == 0 {
		kinds = []string{"no request"}
	}
	res.Notes = append(res.Notes, "scripted model saw: "+strings.Join(kinds, ", "))
	for _, u := range r.Unexpected {
		res.Trouble = append(res.Trouble, "scripted model: unexpected request "+u)
	}
	if r.Result == nil {
		return res
	}
	res.Ran = true
	content := r.Result.Content
	res.Output = []byte(content)
	if m := execOutput.FindStringSubmatch(content); m != nil {
		res.Output = []byte(m[1])
	}
	if m := execExit.FindStringSubmatch(content); m != nil {
		res.Exit, _ = strconv.Atoi(m[1])
	} else {
		res.Failed, res.Exit = true, 1 // no command ran to give a status (Codex refused it)
		res.Notes = append(res.Notes, "Codex told the model: "+firstLine(content))
	}
	if m := execCut.FindString(content); m != "" {
		res.Trouble = append(res.Trouble, fmt.Sprintf("Codex did not hand back the whole output (%s): the probe's frame was cut", m))
	}
	return res
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
