// Package firejail adapts Firejail (Debian `firejail`, a setuid sandbox built on namespaces and
// seccomp) as a deny-all sandbox: `--net=none` (a network namespace with only a loopback), the
// filesystem read-only except the workspace, denied paths blacklisted. Firejail is not built on
// bubblewrap: its own seam for faults is the `firejail` found on the session's PATH.
package firejail

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/targets"
)

// Name of the adapter in matrices and on the command line.
const Name = "firejail"

// knownFindings are where the real, healthy firejail fails a spec (package knownfindings reads them).
//
//go:embed knownfindings.yaml
var knownFindings []byte

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return New(s["path"]) })
	targets.RegisterFindings(Name, targets.Findings{File: "targets/firejail/knownfindings.yaml", Data: knownFindings})
}

// Target is the firejail adapter: a deny-all tool sandbox (targets.ToolSandbox) with its own
// command line.
type Target struct{ targets.ToolSandbox }

// New finds firejail: an explicit path, $SANDCHECK_FIREJAIL, then PATH. Without an explicit path
// every session looks firejail up on its own PATH, so a fault's shim put first there wraps it.
func New(path string) (*Target, error) {
	tool, err := targets.NewToolSandbox("firejail", path, config.Firejail, "Debian: apt-get install firejail")
	if err != nil {
		return nil, err
	}
	return &Target{tool}, nil
}

func (t *Target) Name() string { return Name }

// Args is firejail's command line for a session, without the executable. `--noprofile`: as
// root firejail would otherwise load its default profile (and for a named program, that
// program's profile), which changes what is writable behind our back; the policy here is only
// what the options say.
//
//	--quiet --noprofile --net=none --read-only=/
//	--read-write=W            each writable path (the workspace) and the session's private TMPDIR
//	--env=TMPDIR=T            that TMPDIR, inside (see Prepare)
//	--blacklist=P             each denied path
//	-- COMMAND...
func Args(s *targets.Session, tmp string) []string {
	a := []string{"--quiet", "--noprofile", "--net=none", "--read-only=/"}
	for _, w := range s.Policy.WritablePaths {
		a = append(a, "--read-write="+w)
	}
	if tmp != "" {
		a = append(a, "--read-write="+tmp, "--env=TMPDIR="+tmp)
	}
	for _, d := range s.Policy.DenyRead {
		a = append(a, "--blacklist="+d)
	}
	return append(append(a, "--"), s.Command...)
}

// Prepare returns `firejail ARGS -- COMMAND`, run in the workspace. TMPDIR is a directory of the
// session's own (firejail has no private /tmp that would keep the command's files visible),
// given with --env as well as in the environment: firejail is setuid root, so for any other user
// the C library drops TMPDIR from its environment before it starts (secure-execution mode).
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	env := s.Env
	tmp := ""
	if s.Dir != "" {
		tmp = filepath.Join(s.Dir, "firejail-tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, fmt.Errorf("firejail tmp: %w", err)
		}
		env = targets.SetEnv(env, "TMPDIR", tmp)
	}
	return t.Invocation(s, Args(s, tmp), env)
}
