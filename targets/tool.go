package targets

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"github.com/sandcheck/sandcheck/config"
)

// Tool is a sandbox executable from a distribution package (bwrap, firejail). Unless a path is
// configured, every session looks it up again on its own PATH, so a fault's shim put first there
// wraps the real one, as srt's own lookup of bwrap and socat does.
type Tool struct {
	name     string
	explicit string // configured path; "" = the session's PATH
	found    string // what this host has, for Version
	verOnce  sync.Once
	ver      string
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
	t.verOnce.Do(func() {
		t.ver = "unknown"
		if out, err := exec.Command(t.found, "--version").Output(); err == nil {
			t.ver, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
		}
	})
	return t.ver
}
