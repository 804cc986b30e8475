// Package reproscript writes a standalone reproducer for a failing scenario: a POSIX shell script
// a maintainer runs without sandcheck. It needs root, iproute2, python3 and the sandbox under
// test, and nothing of sandcheck's: it stands up the fixture hosts itself (two network namespaces
// of its own, one for the sandbox's host, one for the fixture), gives the sandbox the exact
// settings and command line the trial used, sends the same request byte for byte, prints what
// the fixture logged, and exits 1 when the bug shows, 0 when it does not, 2 when it cannot tell.
//
// What it covers so far: the bypass family's requests through a proxy (HTTP, CONNECT, SOCKS5) on
// srt, Codex and Claude Code (the secrets class's on srt), the network family's channels on srt (the
// seed's probe: the allowed host, then the denied one, the same way), to host unix sockets, requests that use
// no proxy (directscript: TCP, UDP, ICMP, io_uring, DNS; srt, Codex, bubblewrap and firejail), and a kill of a
// process of the user's outside the sandbox (signalscript, bubblewrap and firejail), with the conditions a user's
// configuration sets around such a request, a caller's dead proxy and proxy ports that are not a
// proxy (requestscript); the git, fs-interplay, privilege, globs and setup classes on srt, bubblewrap,
// firejail and Claude Code, and the hook a new repository gets, whose scripts show the impact
// itself (git.go, fs.go, fswrite); writes outside the writable paths (fswrite); concurrent srt
// sessions (concscript) and Claude Code's start-up race, rates over many runs; Claude Code's
// configurations (claudescript). Everything else says why it has no reproducer yet.
package reproscript

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/concscript"
	"github.com/sandcheck/sandcheck/reports/reproscript/fswrite"
	"github.com/sandcheck/sandcheck/reports/reproscript/requestscript"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// FileName is the script's name for a scenario: its id with slashes as dashes.
func FileName(scenario string) string { return strings.ReplaceAll(scenario, "/", "-") + ".sh" }

// Script is the reproducer of scenario as the trial rec ran it; the error says why there is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	if strings.HasPrefix(scenario, "claude-settings/") {
		return claudescript.Script(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "network/channel/") {
		if rec.Cell.Target == "claude-code" {
			return claudescript.RaceScript(rec, scenario, why)
		}
		return requestscript.Channel(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "network/") {
		return "", fmt.Errorf("%s sums up the network channels: the failing channels' scripts (network/channel/...) reproduce it", scenario)
	}
	if strings.HasPrefix(scenario, "filesystem/") {
		return fswrite.Script(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "bypass/git/") {
		return gitScript(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "bypass/fs-interplay/") || strings.HasPrefix(scenario, "bypass/privilege/") || strings.HasPrefix(scenario, "bypass/globs/") ||
		strings.HasPrefix(scenario, "bypass/setup/") || strings.HasPrefix(scenario, "bypass/persistence/") || strings.HasPrefix(scenario, "bypass/userns/") ||
		strings.HasPrefix(scenario, "bypass/nesting/") {
		return fsScript(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "concurrency/") {
		return concscript.Script(rec, scenario, why)
	}
	switch scenario {
	case "untrusted/proxy-env-dead":
		return requestscript.EnvDead(rec, scenario, why)
	case "failclosed/proxy-port-taken":
		return requestscript.PortTaken(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "untrusted/") { // a settings file Claude Code was given
		return claudescript.Script(rec, scenario, why)
	}
	if !strings.HasPrefix(scenario, "bypass/") {
		return "", fmt.Errorf("standalone reproducers cover the bypass, filesystem and concurrency families, two conditions and Claude Code's configurations and start-up race so far, not %s", scenario)
	}
	return requestscript.Script(rec, scenario, why)
}

// Sandbox is the command a scenario's reproducer runs as SANDBOX: claude for Claude Code's trials
// and its own configurations, else the target's own (srt, bwrap, firejail, codex; srt when
// unknown).
func Sandbox(scenario, target string) string {
	switch {
	case strings.HasPrefix(scenario, "claude-settings/"):
		return "claude"
	case target == "":
		return "srt"
	case target == "claude-code":
		return "claude"
	}
	return target
}

// Written is what WriteAll did for one failing scenario: the script's path, or why none.
type Written struct {
	Scenario, Path, Why string
	Target              string // the target of the trial the script came from
}

// WriteAll writes, into dir, a reproducer for every scenario that failed in the journal at path
// (known findings included: a maintainer needs those most), from the first trial that showed it
// with its evidence kept; each scenario's entry says where, or why it has none.
func WriteAll(path, dir string) ([]Written, error) {
	done := map[string]*Written{}
	var order []string
	_, err := journal.Scan(path, func(rec model.Record) error {
		for _, s := range rec.Scenarios {
			if !s.Failed() {
				continue
			}
			w := done[s.Name]
			if w == nil {
				w = &Written{Scenario: s.Name}
				done[s.Name] = w
				order = append(order, s.Name)
			}
			if w.Path != "" {
				continue
			}
			text, err := Script(rec, s.Name, s.Hint)
			if err != nil {
				w.Why = err.Error()
				continue
			}
			w.Path, w.Why, w.Target = filepath.Join(dir, FileName(s.Name)), "", rec.Cell.Target
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(w.Path, []byte(text), 0o755); err != nil {
				return fmt.Errorf("write %s: %w", w.Path, err)
			}
		}
		return nil
	})
	out := make([]Written, len(order))
	for i, name := range order {
		out[i] = *done[name]
	}
	return out, err
}

// Report writes the reproducers of a run's failing scenarios into dir (WriteAll) and lists them
// on stdout, each with how to run it or why it has none; nothing when dir is "".
func Report(stdout, stderr io.Writer, journal, dir string) {
	if dir == "" {
		return
	}
	done, err := WriteAll(journal, dir)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck: standalone reproducers: %v\n", err)
	}
	if len(done) == 0 {
		return
	}
	fmt.Fprintf(stdout, "\n## Standalone reproducers\n\nEach needs root and the sandbox (SANDBOX=/path/to/it), and says what else in its header (iproute2 and python3 for a request, git for a repository); exit 1: the bug shows, 0: it does not, 2: cannot tell.\n\n")
	for _, w := range done {
		if w.Path != "" {
			fmt.Fprintf(stdout, "- `%s`: `sudo SANDBOX=$(command -v %s) sh %s`\n", w.Scenario, Sandbox(w.Scenario, w.Target), w.Path)
		} else {
			fmt.Fprintf(stdout, "- `%s`: none: %s\n", w.Scenario, w.Why)
		}
	}
}
