package targets

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
)

// Tool is a sandbox executable from a distribution package (bwrap, firejail). Unless a path is
// configured, every session looks it up again on its own PATH, so a fault's shim put first there
// wraps the real one, as srt's own lookup of bwrap and socat does.
type Tool struct {
	name     string
	explicit string // configured path; "" = the session's PATH
	found    string // what this host has, for Version
	ver      versionOnce
}

// FindTool finds name: an explicit path, then $envVar, then PATH. installHint says how to get it.
func FindTool(name, explicit, envVar, installHint string) (*Tool, error) {
	if explicit == "" {
		explicit = config.Get().Tool(envVar)
	}
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, explicit, err)
		}
		return &Tool{name: name, explicit: p, found: p}, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s not found on PATH (%s): %w", name, installHint, err)
	}
	return &Tool{name: name, found: p}, nil
}

// Path is the executable for a session with environment env.
func (t *Tool) Path(env []string) (string, error) {
	if t.explicit != "" {
		return t.explicit, nil
	}
	p, err := LookPath(t.name, env)
	if err != nil {
		return "", fmt.Errorf("%s not found on the session's PATH: %w", t.name, err)
	}
	return p, nil
}

// Version is the first line `TOOL --version` prints, asked once.
func (t *Tool) Version() string {
	return t.ver.get(func() string {
		out, err := exec.Command(t.found, "--version").Output()
		if err != nil {
			return ""
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return first
	})
}

// ToolSandbox is what the adapters of a distribution's deny-all sandbox tool (bwrap, firejail)
// share: no network at all, the workspace writable, denied paths hidden; no way out; the tool on
// each session's PATH as the seam a fault's shim stands in at; the tool's version. An adapter
// embeds it and adds its name and its command line (Prepare).
type ToolSandbox struct{ tool *Tool }

// NewToolSandbox finds the tool (FindTool).
func NewToolSandbox(name, explicit, envVar, installHint string) (ToolSandbox, error) {
	tool, err := FindTool(name, explicit, envVar, installHint)
	return ToolSandbox{tool}, err
}

// Capabilities are no network at all, the workspace writable, paths hidden.
func (s ToolSandbox) Capabilities() []model.Capability {
	return []model.Capability{model.CapDenyAllNet, model.CapWritablePaths, model.CapDenyRead}
}

// Reach is empty: a deny-all sandbox offers no way out.
func (s ToolSandbox) Reach() []string { return nil }

// Seams implements Seamed: the tool is looked up on each session's PATH, where a shim can stand
// in for it.
func (s ToolSandbox) Seams() []model.Seam { return []model.Seam{model.OnPath(s.tool.name)} }

// Starts implements Starter: the configured path, else the tool's name, which each session looks
// up on its PATH.
func (s ToolSandbox) Starts() string {
	if s.tool.explicit != "" {
		return s.tool.explicit
	}
	return s.tool.name
}

// Version is the tool's (Tool.Version).
func (s ToolSandbox) Version() string { return s.tool.Version() }

// Invocation is `TOOL ARGS` for a session, args ending with `-- COMMAND...`, run in the
// workspace with env; the report's settings text is the options before the command.
func (s ToolSandbox) Invocation(sess *Session, args, env []string) (*Invocation, error) {
	bin, err := s.tool.Path(sess.Env)
	if err != nil {
		return nil, err
	}
	return &Invocation{
		Argv:     append([]string{bin}, args...),
		Env:      env,
		Dir:      sess.Workspace,
		Settings: strings.Join(args[:len(args)-len(sess.Command)], " "),
	}, nil
}
