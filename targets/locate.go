package targets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

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
