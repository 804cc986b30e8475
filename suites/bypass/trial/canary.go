//go:build linux

package trial

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/targets"
)

// Canary is a secret planted for the sandboxed session, as a caller's API key or credentials file
// would be there: an environment variable, or a file under the session's HOME. Its value is made
// per trial, and the fixture logs every request that carries it (model.Hit.Carried).
type Canary struct {
	Name string `json:"name"`           // names it in the fixture's log
	Env  string `json:"env,omitempty"`  // the variable, or
	File string `json:"file,omitempty"` // the file, relative to HOME
}

// Credential is the canary as a sandbox is told of it (a file's path from HOME, ~/), withheld.
func (c Canary) Credential() targets.Credential {
	if c.Env != "" {
		return targets.Credential{Env: c.Env}
	}
	return targets.Credential{File: "~/" + c.File}
}

// Value is the canary's value in the trial named by nonce.
func (c Canary) Value(nonce string) string { return "sandcheck-" + c.Name + "-" + nonce }

// content is what a canary file holds: the value inside the shape of a credentials file, on one
// line with no newline, so that a header can carry the whole file, a stand-in swapped back too.
func (c Canary) content(nonce string) string {
	return "machine allowed.sandcheck.test login sandcheck password " + c.Value(nonce)
}

// canaryValues are the values the fixture watches for, by name.
func canaryValues(cs []Canary, nonce string) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.Name] = c.Value(nonce)
	}
	return out
}

// plant puts the canaries into the session: variables into its environment, files under its
// HOME (owned by the sandbox's user with the rest of the trial's directory, mode 0600 as a
// credentials file is).
func plant(s *targets.Session, cs []Canary, nonce string) error {
	home := targets.EnvValue(s.Env, "HOME", "")
	for _, c := range cs {
		if c.Env != "" {
			s.Env = targets.SetEnv(s.Env, c.Env, c.Value(nonce))
			continue
		}
		if home == "" {
			return fmt.Errorf("canary %s: the session has no HOME to put %s in", c.Name, c.File)
		}
		p := filepath.Join(home, c.File)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("canary %s: %w", c.Name, err)
		}
		if err := os.WriteFile(p, []byte(c.content(nonce)), 0o600); err != nil {
			return fmt.Errorf("canary %s: %w", c.Name, err)
		}
	}
	return nil
}
