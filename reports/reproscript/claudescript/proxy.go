package claudescript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Claude Code as the sandbox of a proxy request's reproducer (the bypass family's requests
// through the proxy Claude Code gives the command): the files the trial gave it laid out again,
// and send(), which has its Bash tool run one request. Each request is a session of its own, so
// the script can clear the fixture's log between the control and the case as it does for srt.

// ProxyHeader is the needs of a proxy request's reproducer whose sandbox is Claude Code, after the
// request script's own header.
const ProxyHeader = `# The sandbox is Claude Code, with bubblewrap and socat on PATH for its sandbox. Its model is a
# stand-in (model.py, below, on loopback in the sandbox's host namespace) that asks the Bash tool
# to run one request (request.py) and nothing else; Claude Code's permission checks, settings,
# sandbox and proxy are the real ones. Each request is one Claude Code session.
`

// WriteSend appends, after the request script's prelude (which set $w and RUN_AS and made the
// trial's HOME, workspace and TMPDIR), the files the trial gave Claude Code, the model, and
// send(): send VIA HOST-AS-HEX PORT METHOD PATH AUTH runs Claude Code as the trial did, from the
// trial's working directory in the sandbox's host namespace ($hs) with the fixture's hosts file,
// its Bash tool running `python3 $w/request.py` with those arguments, and prints what the tool
// returned. What Claude Code leaves running in $hs is killed on exit.
func (g *Given) WriteSend(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	b.WriteString(parts.DaemonDir("cc-daemon-"))
	b.WriteString("trap 'set +e; ip netns pids \"$hs\" 2>/dev/null | xargs -r kill -9 2>/dev/null; cleanup; [ $keep = 1 ] || rm -rf \"$daemon\"' EXIT\n")
	writeLayout(b, g.layout, g.trialDir)
	home, ws := parts.InScript(g.Home, g.trialDir), parts.InScript(g.dir, g.trialDir)
	w("mkdir -p %s %s \"$w/claude\"\nchown -R \"$RUN_AS\" %s %s\n", home, ws, home, ws)
	w("cat > \"$w/model.py\" <<'PY'\n%sPY\n", modelPy)
	input := "{}"
	if len(g.input) > 0 {
		j, _ := json.Marshal(g.input)
		input = string(j)
	}
	w(`# send VIA HOST-AS-HEX PORT METHOD PATH AUTH: one request from inside Claude Code's sandbox, its
# Bash tool asked for it by the model, Claude Code run in the host namespace with the fixture's
# hosts file, as the trial ran it.
send() {
  rm -f "$w/claude/model.port" "$w/claude/tool_result" "$w/claude/unexpected"
  ip netns exec "$hs" python3 "$w/model.py" "$w/claude" "python3 $w/request.py $1 $2 $3 $4 $5 $6" '%s' &
  model=$!
  echo $model >> "$w/pids"
  i=0
  until [ -s "$w/claude/model.port" ]; do i=$((i + 1)); [ $i -lt 100 ] || { echo 'the model did not start'; exit 2; }; sleep 0.1; done
`, strings.ReplaceAll(input, "'", `'\''`))
	w("%s > \"$w/claude/out\" 2>&1 || true\n", inHost("  ", ws, `"$w"`, claudeLine("      ", `"$RUN_AS"`, home, `"$w/claude/model.port"`, `"$SANDBOX"`, g.Args, g.trialDir)))
	w(`  kill $model 2>/dev/null || true
  if [ -s "$w/claude/unexpected" ]; then echo 'could not tell: Claude Code asked the model something the script does not answer:'; cat "$w/claude/unexpected"; exit 2; fi
  if [ -e "$w/claude/tool_result" ]; then cat "$w/claude/tool_result"; echo; else echo '(no tool result came back) Claude Code printed:'; cat "$w/claude/out"; fi
}
`)
}

// ProxyRun is a proxy request's trial on Claude Code, as a request script runs it again: `claude
// -p` as the trial ran it, with the files it was given (Given), its Bash tool asked for each
// request by the script's own model.
type ProxyRun struct {
	Raw   json.RawMessage // the session's evidence
	Dir   string          // the run's working directory
	given *Given
}

// Check reads what the trial gave Claude Code, or says why a script cannot give it again.
func (r *ProxyRun) Check() error {
	if r.Dir == "" {
		return parts.ErrNoWorkingDir
	}
	g, err := ReadGiven(r.Raw, filepath.Dir(r.Dir))
	if err != nil {
		return err
	}
	r.given = g
	return nil
}

// Open writes the script's opening (see srtrun.Run.Open) for Claude Code, then the files it was
// given, its model and send() (Given.WriteSend).
func (r *ProxyRun) Open(b *strings.Builder, scenario, why, header, prelude string) error {
	var e struct {
		TargetVersion string `json:"target_version"`
		parts.Broken
	}
	_ = json.Unmarshal(r.Raw, &e)
	named := strings.NewReplacer("SANDBOX=/path/to/srt (default: srt on PATH)", "SANDBOX=/path/to/claude (default: claude on PATH)",
		"set SANDBOX=/path/to/srt", "set SANDBOX=/path/to/claude")
	parts.Opening(b, scenario, "Claude Code", e.TargetVersion, why)
	e.Broken.Note(b)
	header = named.Replace(header)
	at := strings.Index(header, "set -eu\n")
	if at < 0 {
		return fmt.Errorf("the request script's header has no set -eu")
	}
	b.WriteString(header[:at] + ProxyHeader + header[at:])
	fmt.Fprintf(b, "SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\n", r.given.User)
	b.WriteString(named.Replace(prelude))
	r.given.WriteSend(b)
	return nil
}
