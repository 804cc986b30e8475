package claudescript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Concurrent Claude Code sessions (the concurrency family): K sessions started together, each
// with the files its session was given and a model of its own whose Bash tool call waits a
// second, in one workspace or one each as the trial's were; the workspace compared before and
// after, round after round.

const concHeader = `#
# Needs root (to run Claude Code as another account, in a network namespace of loopback only that
# the script makes and removes), iproute2, util-linux (setpriv), python3 and Claude Code:
# SANDBOX=/path/to/claude (default: claude on PATH), with bubblewrap and socat on PATH for its
# sandbox. Each session's model is a stand-in (model.py, below, on loopback) that asks the Bash
# tool for a command that waits a second and nothing else; Claude Code's settings, sandbox and
# proxy are the real ones. Each round starts the trial's %[1]d sessions at once, %[2]s; once all
# have ended, the workspace must be as it was before the round, and each session's command must
# have run. It does that ROUNDS times (default 10). It makes no network request but to the models
# on loopback, and removes what it made.
# Exit 1: some round left the workspace changed, or some session's command did not run. 0: none.
# 2: could not tell.
set -eu
`

// concCommand is each session's command: it overlaps its siblings', then says it ran.
const concCommand = "sleep 1; echo repro-ran"

// ConcScript is the reproducer of a concurrency scenario whose sessions (each one's evidence, as
// ReadGiven reads it) ran Claude Code together, in one workspace when shared.
func ConcScript(sessions []json.RawMessage, shared bool, scenario, version, why string) (string, error) {
	var gs []*Given
	trialDir := ""
	for _, raw := range sessions {
		var e claudeEvidence
		if err := json.Unmarshal(raw, &e); err != nil || e.Dir == "" {
			return "", parts.ErrNoWorkingDir
		}
		if trialDir == "" {
			trialDir = filepath.Dir(e.Dir)
		}
		g, err := ReadGiven(raw, trialDir)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(g.dir, trialDir+"/") {
			return "", fmt.Errorf("the sessions did not run under one trial directory (%s, %s)", trialDir, g.dir)
		}
		gs = append(gs, g)
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, "Claude Code", version, why)
	where := "each in a workspace of its own"
	if shared {
		where = "in one workspace"
	}
	w(concHeader, len(gs), where)
	w("SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\nROUNDS=${ROUNDS:-10}\n", gs[0].User)
	b.WriteString(strings.ReplaceAll(parts.AccountPrelude(`command -v ip >/dev/null 2>&1 || { echo "no ip (iproute2): the sessions run in a network namespace of their own" >&2; exit 2; }`),
		"/path/to/srt", "/path/to/claude"))
	b.WriteString(`net=reprok$$
daemon=/tmp/cc-daemon-$(id -u "$RUN_AS")
keep=0; [ ! -e "$daemon" ] || keep=1
trap 'set +e; ip netns pids "$net" 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del "$net" 2>/dev/null; rm -rf "$w"; [ $keep = 1 ] || rm -rf "$daemon"' EXIT
ip netns add "$net"
ip -n "$net" link set lo up
top=$w
`)
	w("cat > \"$w/model.py\" <<'PY'\n%sPY\n", modelPy)
	var wss []string
	seen := map[string]bool{}
	for i, g := range gs {
		// lay_outI DIR: session I's files under DIR as they were under the trial's directory.
		w("lay_out%d() {\n  w=$1\n", i+1)
		writeLayout(&b, g.layout, trialDir)
		home, ws := parts.InScript(g.Home, trialDir), parts.InScript(g.dir, trialDir)
		w("  mkdir -p %s %s \"$w/tmp\"\n}\n", home, ws)
		if rel := strings.TrimPrefix(g.dir, trialDir+"/"); !seen[rel] {
			seen[rel] = true
			wss = append(wss, parts.ShellSafe(rel))
		}
	}
	for i, g := range gs {
		input := "{}"
		if len(g.input) > 0 {
			j, _ := json.Marshal(g.input)
			input = string(j)
		}
		// sessionI RD: session I of the round whose directory is RD (standing in the trial's).
		w("session%d() {\n  w=$1; d=\"$w/m%d\"; mkdir -p \"$d\"\n", i+1, i+1)
		w("  ip netns exec \"$net\" python3 \"$top/model.py\" \"$d\" '%s' '%s' &\n  model=$!\n", concCommand, strings.ReplaceAll(input, "'", `'\''`))
		b.WriteString("  i=0\n  until [ -s \"$d/model.port\" ]; do i=$((i + 1)); [ $i -lt 100 ] || { kill $model; return; }; sleep 0.1; done\n")
		line := claudeLine("      ", `"$RUN_AS"`, parts.InScript(g.Home, trialDir), `"$d/model.port"`, `"$SANDBOX"`, g.Args, trialDir)
		w("  ( cd %s && ip netns exec \"$net\" setpriv --reuid=\"$RUN_AS\" --regid=\"$(id -g \"$RUN_AS\")\" --init-groups \\\n    %s ) > \"$d/out\" 2>&1 || true\n",
			parts.InScript(g.dir, trialDir), line)
		b.WriteString("  kill $model 2>/dev/null || true\n}\n")
	}
	b.WriteString("# round R: the sessions at once under $top/rR.\nround() {\n  rd=\"$top/r$1\"\n")
	for i := range gs {
		w("  ( lay_out%d \"$rd\" )\n", i+1)
	}
	w("  chown -R \"$RUN_AS\" \"$rd\"\n  ( cd \"$rd\" && find %s | sort ) > \"$rd.before\"\n  pids=\n", strings.Join(wss, " "))
	for i := range gs {
		w("  session%d \"$rd\" & pids=\"$pids $!\"\n", i+1)
	}
	w("  wait $pids || true\n  ( cd \"$rd\" && find %s | sort ) > \"$rd.after\"\n}\n", strings.Join(wss, " "))
	b.WriteString(`residue=0 failed=0 r=0
while [ $r -lt "$ROUNDS" ]; do
  r=$((r + 1))
  round $r
` + parts.RoundResidue + `  for d in "$w/r$r"/m*; do
    if [ -s "$d/unexpected" ]; then echo 'could not tell: Claude Code asked the model something the script does not answer:'; cat "$d/unexpected"; exit 2; fi
    grep -q '^repro-ran' "$d/tool_result" 2>/dev/null && continue
    failed=$((failed + 1))
    [ $failed -gt 1 ] || { echo "-- round $r: a session's command did not run; the Bash tool returned, then Claude Code printed:"; cat "$d/tool_result" "$d/out" 2>/dev/null; echo; }
  done
done
`)
	w("echo \"rounds that left the workspace changed: $residue of $ROUNDS; sessions whose command did not run: $failed of $((ROUNDS * %d))\"\n", len(gs))
	b.WriteString(`if [ "$residue" -gt 0 ] || [ "$failed" -gt 0 ]; then
  echo "BUG: sessions started together interfere, or leave the workspace changed"
  exit 1
fi
echo "no bug in $ROUNDS rounds"
exit 0
`)
	return b.String(), nil
}
