// Package bwrap adapts plain bubblewrap (Debian `bubblewrap`) as a deny-all sandbox: every
// namespace unshared (so no network at all, only a loopback), the root filesystem read-only,
// a private /tmp, the workspace writable, denied paths hidden. It is the smallest sandbox that
// still confines a command, and the floor every richer sandbox is compared with.
package bwrap

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/targets"
)

// Name of the adapter in matrices and on the command line.
const Name = "bwrap"

// knownFindings are where the real, healthy bwrap fails a spec (package knownfindings reads them).
//
//go:embed knownfindings.yaml
var knownFindings []byte

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return New(s["path"]) })
	targets.RegisterFindings(Name, targets.Findings{File: "targets/bwrap/knownfindings.yaml", Data: knownFindings})
}

// Target is the bwrap adapter: a deny-all tool sandbox (targets.ToolSandbox) with its own
// command line.
type Target struct{ targets.ToolSandbox }

// New finds bubblewrap: an explicit path, $SANDCHECK_BWRAP, then PATH. Without an explicit
// path every session looks bwrap up again on its own PATH, as srt does, so a shim put first on
// PATH (the netns-shared and fs-* faults) wraps the real one.
func New(path string) (*Target, error) {
	tool, err := targets.NewToolSandbox("bwrap", path, config.Bwrap, "Debian: apt-get install bubblewrap")
	if err != nil {
		return nil, err
	}
	return &Target{tool}, nil
}

func (t *Target) Name() string { return Name }

// Args is the bubblewrap command line for a session, without the bwrap executable itself.
//
//	--new-session --die-with-parent --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
//	--ro-bind DIR DIR              the session's own files (generated settings, probe spec)
//	--ro-bind CMD CMD              files the command names that lie under /tmp (its executable)
//	--bind W W                     each writable path (the workspace)
//	--tmpfs D | --ro-bind /dev/null F   each denied path: a directory emptied, a file nulled
//	--chdir WS -- COMMAND...
//
// --new-session keeps the caller's terminal from being the command's controlling one, so the
// command cannot push input into it (TIOCSTI, CVE-2017-5226): bubblewrap's own advice, which srt
// follows too; the tty bypass scenario checks it.
func Args(s *targets.Session) []string {
	a := []string{"--new-session", "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	underTmp := func(p string) bool { return strings.HasPrefix(filepath.Clean(p)+"/", "/tmp/") }
	if s.Dir != "" && underTmp(s.Dir) {
		a = append(a, "--ro-bind", s.Dir, s.Dir)
	}
	for _, c := range s.Command {
		if filepath.IsAbs(c) && underTmp(c) && (s.Dir == "" || !strings.HasPrefix(c, s.Dir+"/")) {
			if _, err := os.Stat(c); err == nil {
				a = append(a, "--ro-bind", c, c)
			}
		}
	}
	for _, w := range s.Policy.WritablePaths {
		a = append(a, "--bind", w, w)
	}
	for _, d := range s.Policy.DenyRead {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			continue // nothing there to hide
		case fi.IsDir():
			a = append(a, "--tmpfs", d)
		default:
			a = append(a, "--ro-bind", "/dev/null", d)
		}
	}
	if s.Workspace != "" {
		a = append(a, "--chdir", s.Workspace)
	}
	return append(append(a, "--"), s.Command...)
}

// Prepare returns `bwrap ARGS -- COMMAND`. Inside, TMPDIR is the private /tmp.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	return t.Invocation(s, Args(s), targets.SetEnv(s.Env, "TMPDIR", "/tmp"))
}
