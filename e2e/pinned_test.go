package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/reports/reproscript"
)

// scriptRun is one run of a standalone reproducer by a test: the script's file name, the target
// of the sandbox it was given, and its exit status.
type scriptRun struct {
	file, target string
	code         int
}

var (
	scriptRunsMu sync.Mutex
	scriptRuns   []scriptRun
)

// sandboxTargets are the targets by the name of the sandbox's program a script is given.
var sandboxTargets = map[string]string{"srt": "srt", "claude": "claude-code", "codex": "codex", "bwrap": "bwrap", "firejail": "firejail"}

// recordScript notes a test's run of script with sandbox and env, and its exit status: only a
// run of a healthy trial's script (its opening names no fault of sandcheck's) with the healthy
// sandbox (no broken tools first on PATH, no PROXY in srt's place).
func recordScript(script, sandbox string, env []string, code int) {
	text, err := os.ReadFile(script)
	if err != nil || strings.Contains(string(text), "The trial ran under sandcheck's fault") {
		return
	}
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") || strings.HasPrefix(e, "PROXY=") {
			return
		}
	}
	scriptRunsMu.Lock()
	defer scriptRunsMu.Unlock()
	scriptRuns = append(scriptRuns, scriptRun{filepath.Base(script), sandboxTargets[filepath.Base(sandbox)], code})
}

// pinnedWithoutScript are the pinned findings, by target and scenario, whose reproducer no test
// runs, and why.
var pinnedWithoutScript = func() map[string]string {
	m := map[string]string{
		"claude-code/bypass/bridge/socket-swap": "the bridge's reproducer drives srt so far; Claude Code's bundled runtime relays the same way, " +
			"and TestReproStandaloneBridge runs srt 0.0.83's",
		"claude-code/claude-settings/settings/excluded-command": "it names the probe's own command (excludedCommands), which a script's command is not",
	}
	// The start-up race shows in a few sessions in a hundred, under load only.
	for _, ch := range []string{"http", "https", "socks"} {
		m["claude-code/network/channel/"+ch] = "intermittent, under load: TestReproStandaloneClaudeRace runs its script with the relay made " +
			"late by a fault (exit 1) and healthy (exit 0); docs/reports/claude-code-startup-race.md has its rate under load"
	}
	// failIfUnavailable's configurations each take a condition of the fail-closed family: a fault of
	// sandcheck's (a relay of its own, a program hidden from PATH).
	for _, c := range []string{"true/bridge-absent", "true/bridge-late", "true/bridge-mid", "true/host-bridge-dies",
		"false/bridge-absent", "false/bridge-late", "false/bridge-mid", "false/host-bridge-dies", "false/socat-missing", "false/bwrap-missing"} {
		m["claude-code/claude-settings/fail-if-unavailable/"+c] = "its condition is a fault of sandcheck's, whose finding it is"
	}
	return m
}()

// unreproducedPinned (issue 31) names every pinned finding of the healthy sandbox (the targets'
// knownfindings.yaml) that no test's run of its scenario's script, with that target's sandbox,
// showed (exit 1), and that pinnedWithoutScript does not explain; and every entry there that a
// run did show, which is stale. Meaningful only after every e2e test has run.
func unreproducedPinned() ([]string, error) {
	set, err := knownfindings.Load()
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, r := range scriptRuns {
		if r.code == 1 {
			shown[r.target+"/"+r.file] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for target, list := range set {
		for _, f := range list.Findings {
			k := target + "/" + f.Scenario
			if f.Fault != "" || seen[k] {
				continue
			}
			seen[k] = true
			ok := shown[target+"/"+reproscript.FileName(f.Scenario)]
			why, listed := pinnedWithoutScript[k]
			switch {
			case !ok && !listed:
				out = append(out, fmt.Sprintf("%s (%s): no test ran its reproducer and saw it fail", k, f.Pos))
			case ok && listed:
				out = append(out, fmt.Sprintf("%s: a test's run of its reproducer showed it, yet pinnedWithoutScript says %q", k, why))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// everyTestRan says whether this run of the package ran all of its tests (no -run, not -short).
func everyTestRan() bool {
	f := flag.Lookup("test.run")
	return f != nil && f.Value.String() == "" && !testing.Short()
}
