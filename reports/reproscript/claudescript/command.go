package claudescript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Claude Code as the sandbox of another class's reproducer (the filesystem classes): the files the
// trial gave Claude Code, laid out again under the script's directory, and a script of its own,
// $w/claude.sh, that has model.py ask the Bash tool for one command and runs Claude Code as the
// trial did. The class's reproducer decides what the command is and what it proves.

// Given is what a reproducer gives Claude Code again: the account, its HOME and arguments, and
// the files the trial wrote for it.
type Given struct {
	User, Home string
	Args       []string
	layout     []laidFile
	trialDir   string
	dir        string         // the run's working directory
	input      map[string]any // the Bash tool's input beside the command
	broken     parts.Broken
}

// ReadGiven reads a Claude Code session's evidence (raw) of a trial whose directory was trialDir,
// or says why a script cannot give Claude Code the same again.
func ReadGiven(raw json.RawMessage, trialDir string) (*Given, error) {
	var e claudeEvidence
	if err := json.Unmarshal(raw, &e); err != nil || e.Target != "claude-code" {
		return nil, fmt.Errorf("the session's evidence is not Claude Code's")
	}
	return e.given(trialDir)
}

// given is what e's session gave Claude Code (see ReadGiven).
func (e *claudeEvidence) given(trialDir string) (*Given, error) {
	if err := e.Broken.Check(); err != nil {
		return nil, err
	}
	if len(e.Faults) > 0 {
		return nil, fmt.Errorf("the finding is under the scenario's own fault (%s), made by sandcheck's own parts: its reproducer would be sandcheck's", strings.Join(e.Faults, ", "))
	}
	if strings.Contains(string(e.Settings), "excludedCommands") {
		return nil, fmt.Errorf("the settings exclude the probe's own command by name; the reproducer's command is another, which they would not exclude")
	}
	if len(e.Layout) == 0 {
		return nil, fmt.Errorf("the trial's evidence does not record the files Claude Code was given (a journal from an older sandcheck): run it again")
	}
	for _, m := range e.Run.Mounts {
		// The fixture's names: a network script binds its own; other classes need none.
		if !strings.HasSuffix(m, " on /etc/hosts") && !strings.HasSuffix(m, " on /etc/resolv.conf") {
			return nil, fmt.Errorf("the trial laid %q over the host's files for Claude Code: the reproducer does not", m)
		}
	}
	for _, f := range e.Layout {
		if !strings.HasPrefix(f.Path, trialDir+"/") {
			return nil, fmt.Errorf("the trial wrote %s, outside its directory: the reproducer writes only its own", f.Path)
		}
	}
	home, err := e.home()
	if err != nil {
		return nil, err
	}
	user, args, err := e.claudeArgs()
	if err != nil {
		return nil, err
	}
	return &Given{User: user, Home: home, Args: args, layout: e.Layout, trialDir: trialDir, dir: e.Dir, input: e.AgentInput, broken: e.Broken}, nil
}

// Header is the needs of a reproducer whose sandbox is Claude Code, after the class's own.
const Header = `# The sandbox is Claude Code: SANDBOX=/path/to/claude (default: claude on PATH), with bubblewrap
# and socat on PATH for its sandbox, and python3 for its model, a stand-in (model.py, below, on
# loopback) that asks the Bash tool to run the case's command and nothing else; Claude Code's
# permission checks, settings and sandbox are the real ones. Everything the user runs here runs
# in a network namespace of the script's with nothing but loopback (iproute2's ip makes it), so
# nothing leaves the machine, and what is left running there is killed on exit.
`

// Open writes the opening of a class's reproducer whose sandbox is Claude Code: what it
// reproduces on which release and what the trial saw, the class's header (written for srt, its
// words made Claude Code's), Header, SANDBOX and RUN_AS (the trial's account), and the class's
// prelude, which makes $w. Write follows.
func (g *Given) Open(b *strings.Builder, scenario, version, why, header, prelude string) {
	named := strings.NewReplacer("/path/to/srt", "/path/to/claude", "(default: srt on PATH)", "(default: claude on PATH)",
		"It makes no network request.", "It makes no network request but to its model on loopback.")
	parts.Opening(b, scenario, "Claude Code", version, why)
	g.broken.Note(b)
	b.WriteString(named.Replace(header))
	b.WriteString(Header)
	fmt.Fprintf(b, "SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\n", g.User)
	b.WriteString(named.Replace(prelude))
}

// Write appends the lines that lay out what Claude Code was given, under $w, and $w/claude.sh.
// They come after the class's prelude, which set $w, RUN_AS and as_user; as_user then runs in a
// network namespace of loopback only. `sh "$w/claude.sh" "$SANDBOX"`, run as the user with w,
// ws and the case's variables in its environment, has Claude Code's Bash tool run
// $w/command.sh from the trial's working directory, with those variables, and prints the tool's
// result: what the command printed.
func (g *Given) Write(b *strings.Builder, vars ...string) {
	vars = append([]string{"w", "ws"}, vars...)
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	b.WriteString(`claude_net=reproclaude$$
daemon=/tmp/cc-daemon-$(id -u "$RUN_AS")
keep=0; [ ! -e "$daemon" ] || keep=1
# Everything run as the user runs in "$claude_net": what Claude Code leaves running dies with it.
trap 'set +e; ip netns pids "$claude_net" 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del "$claude_net" 2>/dev/null; rm -rf "$w"; [ $keep = 1 ] || rm -rf "$daemon"' EXIT
ip netns add "$claude_net"
ip -n "$claude_net" link set lo up
as_user() {
  ip netns exec "$claude_net" setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \
    env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 "$@"
}
`)
	writeLayout(b, g.layout, g.trialDir)
	home := parts.InScript(g.Home, g.trialDir)
	w("mkdir -p %s \"$w/claude\"\nchown -R \"$RUN_AS\" %s \"$w/claude\"\n", home, home)
	w("cat > \"$w/model.py\" <<'PY'\n%sPY\n", modelPy)
	// The case's command, with the script's variables, as the Bash tool runs it.
	w("cat > \"$w/claude/command.sh\" <<CMD\n")
	for _, v := range vars {
		w("%s=\\$(cat \"$w/claude/var.%s\"); export %s\n", v, v, v)
	}
	w("cd \"$ws\" && exec sh \"$w/command.sh\"\nCMD\n")
	w("cat > \"$w/claude.sh\" <<'CLAUDE'\n")
	for _, v := range vars {
		w("printf '%%s' \"$%s\" > \"$w/claude/var.%s\"\n", v, v)
	}
	w("rm -f \"$w/claude/model.port\" \"$w/claude/tool_result\"\n")
	w("python3 \"$w/model.py\" \"$w/claude\" \"sh $w/claude/command.sh\" '{}' & model=$!\n")
	w("i=0\nuntil [ -s \"$w/claude/model.port\" ]; do i=$((i + 1)); [ $i -lt 100 ] || { echo 'the model did not start'; kill $model; exit 2; }; sleep 0.1; done\n")
	w("%s > \"$w/claude/out\" 2>&1 || true\n", claudeLine("  ", `"$USER"`, home, `"$w/claude/model.port"`, `"$1"`, g.Args, g.trialDir))
	w("kill $model 2>/dev/null || true\n")
	w("if [ -s \"$w/claude/unexpected\" ]; then echo 'could not tell: Claude Code asked the model something the script does not answer:'; cat \"$w/claude/unexpected\"; fi\n")
	w("if [ -e \"$w/claude/tool_result\" ]; then cat \"$w/claude/tool_result\"; echo; else echo '(no tool result came back) Claude Code printed:'; cat \"$w/claude/out\"; fi\n")
	w("CLAUDE\n")
}

// Run is the command line, for the class's script, that runs Claude Code as Write laid it out.
const Run = `sh "$w/claude.sh" "$SANDBOX"`

// writeLayout appends the lines that write, under $w, the files the trial gave Claude Code, each
// with its mode and with the script's directory where the trial's was.
func writeLayout(b *strings.Builder, layout []laidFile, trialDir string) {
	b.WriteString("# The files Claude Code was given: its settings and the workspace's trust, as in the trial.\n")
	for _, f := range layout {
		p := parts.InScript(f.Path, trialDir)
		text := parts.Relocated(f.Text, trialDir)
		fmt.Fprintf(b, "mkdir -p \"$(dirname %s)\"\ncat > %s <<'FILE'\n%s\nFILE\n", p, p, text)
		b.WriteString(parts.SetDir(p, text))
		fmt.Fprintf(b, "chmod %o %s\n", f.Mode&0o777, p)
	}
}

// claudeLine is Claude Code's command line as a script gives it the trial's arguments (args, the
// trial directory in them the script's), in the environment a trial gives it: the account (user,
// as the shell reads it), its HOME, the script's TMPDIR, the model's address read from portFile, a
// dummy key and none of Claude Code's own traffic, plus $caller_env (a condition's own variables,
// empty by default). Continued lines start with indent.
func claudeLine(indent, user, home, portFile, sandbox string, args []string, trialDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "env -i PATH=\"$PATH\" HOME=%s USER=%s LOGNAME=%s TMPDIR=\"$w/tmp\" LANG=C.UTF-8 ${caller_env:-} \\\n", home, user, user)
	fmt.Fprintf(&b, "%sANTHROPIC_BASE_URL=\"http://127.0.0.1:$(cat %s)\" ANTHROPIC_API_KEY=sk-ant-reproducer-dummy-key \\\n", indent, portFile)
	fmt.Fprintf(&b, "%sCLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \\\n", indent)
	fmt.Fprintf(&b, "%stimeout 120 %s%s", indent, sandbox, parts.InScriptArgs(args, trialDir))
	return b.String()
}
