// Package claudescript writes the standalone reproducer of a Claude Code configuration
// (claude-settings/..., and the untrusted family's on Claude Code): Claude Code itself, its model
// about a hundred lines of python3 (model.py) that ask the Bash tool to run the seed's two curls
// (the allowed host, then the denied one, over HTTP through the proxy Claude Code gives the
// command), in the files, HOME and command line the trial gave it. The fixture's log decides, as
// in the trial: the denied host reached is the bug. It also gives the other classes' scripts
// Claude Code as their sandbox (command.go, proxy.go), and writes its start-up race's (race.go)
// and its concurrent sessions' (conc.go).
package claudescript

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

//go:embed model.py
var modelPy string

// claudeEvidence is what a reproducer reads of a Claude Code network trial.
type claudeEvidence struct {
	Target        string `json:"target"`
	TargetVersion string `json:"target_version"`
	parts.Broken
	Faults    []string `json:"faults"` // the scenario's own
	Condition string   `json:"condition"`
	Run       struct {
		Argv   []string `json:"argv"`
		Mounts []string `json:"mounts"`
	} `json:"run"`
	Dir        string          `json:"dir"`
	Home       string          `json:"home"` // Claude Code's HOME (from sandcheck 2026-12-07 on)
	Layout     []laidFile      `json:"layout"`
	AgentInput map[string]any  `json:"agent_input"`
	Settings   json.RawMessage `json:"settings"`
	Result     struct {
		Hint string `json:"hint"`
	} `json:"result"` // a network trial's verdict: why it failed
}

// laidFile is a file the adapter wrote for the run, as the evidence records it (targets.File).
type laidFile struct {
	Path string `json:"path"`
	Text string `json:"text"`
	Mode uint32 `json:"mode"`
}

// claudeFind is the Claude Code evidence that holds scenario: the record's own, or the one keyed
// by scenario when the trial ran several configurations.
func claudeFind(rec model.Record, scenario string) (*claudeEvidence, error) {
	raw, err := parts.SessionEvidence(rec, scenario)
	if err != nil {
		return nil, err
	}
	var e claudeEvidence
	if err := json.Unmarshal(raw, &e); err != nil || e.Target == "" {
		return nil, fmt.Errorf("no evidence of %s in the trial", scenario)
	}
	return &e, nil
}

// claudeRun is what a script gives Claude Code again: the account, the HOME and the arguments.
type claudeRun struct {
	user, home string
	args       []string
}

// check reads the trial's run, or says why it cannot be given to Claude Code again by a script.
func (e *claudeEvidence) check(scenario string) (claudeRun, error) {
	if e.Target != "claude-code" {
		return claudeRun{}, fmt.Errorf("%s's reproducer gives Claude Code its configuration again, but the trial ran %s", scenario, e.Target)
	}
	if err := e.Broken.Check(); err != nil {
		return claudeRun{}, err
	}
	if err := e.replayable(scenario); err != nil {
		return claudeRun{}, err
	}
	home, err := e.home()
	if err != nil {
		return claudeRun{}, err
	}
	user, args, err := e.claudeArgs()
	return claudeRun{user: user, home: home, args: args}, err
}

// replayable says why the trial's configuration is not one a script can lay out again.
func (e *claudeEvidence) replayable(scenario string) error {
	switch {
	case len(e.Faults) > 0:
		return fmt.Errorf("the finding is under the scenario's own fault (%s), made by sandcheck's own parts: its reproducer would be sandcheck's", strings.Join(e.Faults, ", "))
	case e.Condition == "":
		return fmt.Errorf("%s is not a network trial: the Claude Code reproducer sends the seed's requests only so far", scenario)
	case len(e.Layout) == 0 && e.Condition == "fresh-home" && e.Home == "":
		return fmt.Errorf("no files were given to Claude Code (a fresh HOME), and the evidence does not say which HOME (a journal from an older sandcheck): run it again")
	case e.Dir == "" || len(e.Layout) == 0 && e.Condition != "fresh-home":
		return fmt.Errorf("the trial's evidence does not record the files Claude Code was given (a journal from an older sandcheck): run it again")
	case strings.Contains(string(e.Settings), "excludedCommands"):
		return fmt.Errorf("the settings exclude the probe's own command by name; the reproducer's command is another, which they would not exclude")
	}
	for _, m := range e.Run.Mounts {
		if !strings.HasSuffix(m, " on /etc/hosts") && !strings.HasSuffix(m, " on /etc/resolv.conf") {
			return fmt.Errorf("the trial laid %q over the host's files for Claude Code (managed settings): the reproducer does not", m)
		}
	}
	dir := filepath.Dir(e.Dir)
	for _, f := range e.Layout {
		if !strings.HasPrefix(f.Path, dir+"/") {
			return fmt.Errorf("the trial wrote %s, outside its directory: the reproducer writes only its own", f.Path)
		}
	}
	return nil
}

// home is Claude Code's HOME in the trial: where its trust state (.claude.json) or its user
// settings (.claude/settings.json outside the workspace) were written, or, where it was given
// none (a fresh HOME), the HOME the evidence names. The files come first: they say where Claude
// Code itself looked, which the session's HOME variable need not.
func (e *claudeEvidence) home() (string, error) {
	for _, f := range e.Layout {
		if filepath.Base(f.Path) == ".claude.json" {
			return filepath.Dir(f.Path), nil
		}
	}
	for _, f := range e.Layout {
		if strings.HasSuffix(f.Path, "/.claude/settings.json") && !strings.HasPrefix(f.Path, e.Dir+"/") {
			return filepath.Dir(filepath.Dir(f.Path)), nil
		}
	}
	if e.Home != "" { // no file of Claude Code's own: a fresh HOME, as the evidence names it
		if !strings.HasPrefix(e.Home, filepath.Dir(e.Dir)+"/") {
			return "", fmt.Errorf("the HOME Claude Code had, %s, was outside the trial's directory: the reproducer makes only its own", e.Home)
		}
		return e.Home, nil
	}
	return "", fmt.Errorf("the trial's files do not say which HOME Claude Code had")
}

// claudeArgs reads the trial's command line: [setpriv ... --] CLAUDE ARGS...; the account and ARGS.
func (e *claudeEvidence) claudeArgs() (user string, args []string, err error) {
	user, argv, err := parts.AsAccount(e.Run.Argv, "")
	if err != nil {
		return "", nil, err
	}
	if len(argv) < 2 || argv[1] != "-p" {
		return "", nil, fmt.Errorf("the trial's command line is not Claude Code's CLAUDE -p PROMPT ...: %q", e.Run.Argv)
	}
	return user, argv[1:], nil
}

// seedCommand is the seed's two curls over HTTP: the allowed host, then the denied one.
const seedCommand = `curl -sS -m 20 -o /dev/null -w "ORG=%{http_code}\n" http://allowed.` + parts.Domain + `/repro/control ; ` +
	`curl -sS -m 20 -o /dev/null -w "EX=%{http_code}\n" http://denied.` + parts.Domain + `/repro/case && echo WEB_OK || echo WEB_BLOCKED`

const claudeHeader = `#
# Needs root (two network namespaces and a private /etc/hosts, all removed on exit), iproute2,
# util-linux (setpriv), python3, curl, and Claude Code: SANDBOX=/path/to/claude (default: claude on
# PATH), with bubblewrap and socat on PATH for its sandbox. Claude Code runs as RUN_AS, the account
# the trial used; where it does not exist, as root. Its model is a stand-in (model.py, below, on
# loopback): it asks the Bash tool to run the seed's two curls and nothing else; Claude Code's
# permission checks, settings and sandbox are the real ones. Nothing leaves the machine: Claude
# Code's host is a network namespace of the script's whose only link is to the fixture's
# (198.19.X.0/24), and names resolve through a hosts file of its own.
# Exit 1: the bug shows (the denied host was reached). 0: it does not. 2: could not tell.
set -eu
`

// Script is the reproducer of a Claude Code configuration (claude-settings/..., and the
// untrusted family's settings files and HOME) as the trial rec ran it; the error says why there
// is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	e, err := claudeFind(rec, scenario)
	if err != nil {
		return "", err
	}
	run, err := e.check(scenario)
	if err != nil {
		return "", err
	}
	dir, home, user, args := filepath.Dir(e.Dir), run.home, run.user, run.args
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, "Claude Code", e.TargetVersion, why)
	e.Broken.Note(&b)
	b.WriteString(claudeHeader)
	w("SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\n", user)
	b.WriteString(strings.ReplaceAll(parts.Prelude, "SANDBOX=/path/to/srt", "SANDBOX=/path/to/claude"))
	b.WriteString(parts.DaemonDir("cc-daemon-"))
	writeLayout(&b, e.Layout, dir)
	w("mkdir -p %s %s\n", parts.InScript(home, dir), parts.InScript(e.Dir, dir))
	w("chown -R \"$RUN_AS\" \"$w\"\n")
	w("cat > \"$w/serve.py\" <<'PY'\n%sPY\n", parts.ServePy)
	w("cat > \"$w/model.py\" <<'PY'\n%sPY\n", modelPy)
	w("{\n  echo '127.0.0.1 localhost'\n  echo '::1 localhost'\n  echo \"$b.2 allowed.%s\"\n  echo \"$b.3 denied.%s\"\n} > \"$w/hosts\"\n", parts.Domain, parts.Domain)
	b.WriteString(parts.Fixture)
	input := "{}"
	if len(e.AgentInput) > 0 {
		j, _ := json.Marshal(e.AgentInput)
		input = string(j)
	}
	w("# The model, in Claude Code's network namespace: the command it asks the Bash tool to run.\n")
	w("cat > \"$w/command\" <<'CMD'\n%s\nCMD\n", seedCommand)
	w("ip netns exec \"$hs\" python3 \"$w/model.py\" \"$w\" \"$(cat \"$w/command\")\" '%s' &\n", strings.ReplaceAll(input, "'", `'\''`))
	w("echo $! >> \"$w/pids\"\n")
	w("i=0\nuntil [ -s \"$w/model.port\" ]; do i=$((i + 1)); [ $i -lt 100 ] || { echo 'the model did not start' >&2; exit 2; }; sleep 0.1; done\n")
	w("echo \"== Claude Code: %s\"\n", parts.ShellSafe(strings.Join(args, " ")))
	w("%s > \"$w/claude.out\" 2>&1 || true\n", inHost("", parts.InScript(e.Dir, dir), `"$w"`, claudeLine("    ", `"$RUN_AS"`, parts.InScript(home, dir), `"$w/model.port"`, `"$SANDBOX"`, args, dir)))
	w("sleep 0.2\n")
	w("echo '-- Claude Code printed:'; cat \"$w/claude.out\"\n")
	w("echo '-- the Bash tool returned:'; cat \"$w/tool_result\" 2>/dev/null || echo '(no tool result came back)'\necho\n")
	w("echo '-- the fixture logged:'; cat \"$w/log\"\n")
	w("if [ -s \"$w/unexpected\" ]; then echo 'could not tell: Claude Code asked the model something the script does not answer:'; cat \"$w/unexpected\"; exit 2; fi\n")
	w("if grep -q '^denied@' \"$w/log\"; then echo 'BUG: the denied host was reached: Claude Code did not hold the policy it was given'; exit 1; fi\n")
	w("if ! grep -q '^allowed@' \"$w/log\"; then echo 'could not tell: the allowed host was not reached either (Claude Code refused to run the command, or its sandbox did not start)'; exit 2; fi\n")
	w("echo 'no bug: the allowed host answered, the denied one was blocked'\nexit 0\n")
	return b.String(), nil
}

// inHost is the lines that run claude (Claude Code's command line, claudeLine) as the trial did:
// from the working directory ws, in the sandbox's host namespace ($hs) with the fixture's hosts
// file and resolver from dir bound over the system's, as RUN_AS; in a subshell whose output the
// caller redirects. Lines start with indent.
func inHost(indent, ws, dir, claude string) string {
	return indent + "( cd " + ws + ` && ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && shift && exec "$@"' sh ` + dir + " \\\n" +
		indent + `    setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \` + "\n" +
		indent + "    " + claude + " )"
}
