package targets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/sandcheck/sandcheck/config"
)

// Locate finds a sandbox executable the way every npm-installed adapter does: an explicit path
// (a bare name is looked up on PATH, as a shell would), then $envVar, then the project's tools
// directory (toolsBin, searched upward from the working directory and from this executable, so
// `go test` in a subpackage and an installed binary both find it), then name on PATH.
func Locate(name, explicit, envVar, toolsBin, installHint string) (string, error) {
	path := explicit
	if path == "" {
		path = config.Get().Tool(envVar)
	}
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%s %q: %w", name, path, err)
		}
		return filepath.Abs(p)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for {
			c := filepath.Join(d, toolsBin)
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c, nil
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: set %s, %s, or put %s on PATH", name, envVar, installHint, name)
}

// CLI says how an npm-installed sandbox's adapter (srt, codex) finds its command (Locate's
// arguments) and how it asks the build found which version it is.
type CLI struct {
	Name, EnvVar, ToolsBin, InstallHint string
	// Version reads the build's version at path; "" when it cannot tell.
	Version func(path string) string
}

// Locate resolves the command (see Locate).
func (c CLI) Locate(explicit string) (string, error) {
	return Locate(c.Name, explicit, c.EnvVar, c.ToolsBin, c.InstallHint)
}

// Find locates the command and wraps it for an adapter to embed.
func (c CLI) Find(explicit string) (*Executable, error) {
	p, err := c.Locate(explicit)
	if err != nil {
		return nil, err
	}
	return c.At(p), nil
}

// At is the command at a path already known (Find without the search).
func (c CLI) At(path string) *Executable { return &Executable{path: path, read: c.Version} }

// Executable is the command an adapter found (CLI.Find): its path, and its version, asked once.
// Adapters embed it for Path and Version.
type Executable struct {
	path string
	read func(path string) string
	ver  versionOnce
}

// Path is the executable in use.
func (e *Executable) Path() string { return e.path }

// Starts implements Starter: the executable in use.
func (e *Executable) Starts() string { return e.path }

// Version is what the build says of itself, "unknown" when it cannot tell.
func (e *Executable) Version() string {
	return e.ver.get(func() string {
		if e.read == nil {
			return ""
		}
		return e.read(e.path)
	})
}

// versionOnce asks a build's version once: starting a sandbox's CLI (or node) costs a trial time.
type versionOnce struct {
	once sync.Once
	ver  string
}

func (v *versionOnce) get(read func() string) string {
	v.once.Do(func() {
		if v.ver = read(); v.ver == "" {
			v.ver = "unknown"
		}
	})
	return v.ver
}
