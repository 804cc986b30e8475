// Package concscript writes the standalone reproducer of the concurrency family's findings on srt
// (and, through claudescript, on Claude Code):
// K sessions started together, in one workspace or one each as the trial's were, each with its
// session's own settings, and the workspace checked once all have ended. What goes wrong shows in
// a fraction of such starts only (a placeholder one session makes and removes under another's
// feet), so the script runs ROUNDS of them and counts: rounds that left the workspace changed,
// and sessions that did not get to run their command.
package concscript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// trial is what the script needs of a concurrency trial's evidence (suites/harness/concurrent).
type trial struct {
	Target        string `json:"target"`
	TargetVersion string `json:"target_version"`
	parts.Broken
	K        int               `json:"k"`
	Shared   bool              `json:"shared_workspace"`
	Raw      []json.RawMessage `json:"-"` // each session's evidence as it is, for Claude Code's script
	Sessions []struct {
		Workspace string          `json:"workspace"`
		Settings  json.RawMessage `json:"settings"`
		Run       struct {
			Argv []string `json:"argv"`
		} `json:"run"`
	} `json:"sessions"`
	Leftovers []string `json:"leftovers"`
}

// find is the trial of scenario in a record's evidence (parts.SessionEvidence: the family runs
// both of its scenarios in one trial, each keyed by its name).
func find(rec model.Record, scenario string) (*trial, error) {
	raw, err := parts.SessionEvidence(rec, scenario)
	if err != nil {
		return nil, err
	}
	var t trial
	if err := json.Unmarshal(raw, &t); err != nil || len(t.Sessions) == 0 {
		return nil, fmt.Errorf("no concurrent sessions of %s in the trial's evidence", scenario)
	}
	// Each session's evidence with the trial's target, release and fault, as a session of
	// Claude Code's is read (claudescript.ReadGiven).
	var whole struct {
		Sessions []map[string]json.RawMessage `json:"sessions"`
	}
	json.Unmarshal(raw, &whole)
	for _, s := range whole.Sessions {
		s["target"], _ = json.Marshal(t.Target)
		s["target_version"], _ = json.Marshal(t.TargetVersion)
		s["fault"], _ = json.Marshal(t.Fault)
		s["fault_tools"], _ = json.Marshal(t.FaultTools)
		one, _ := json.Marshal(s)
		t.Raw = append(t.Raw, one)
	}
	return &t, nil
}

// session is one session as the script starts it: its settings (the trial directory a
// placeholder) and its workspace, relative to the trial directory.
type session struct {
	settings, workspace string
}

// sessions checks t's sessions and reads what the script needs of each, with the account they ran
// as.
func (t *trial) sessions() (out []session, user string, err error) {
	if err := t.Broken.Check(); err != nil {
		return nil, "", err
	}
	if t.Target != "srt" {
		return nil, "", fmt.Errorf("the concurrency reproducer drives srt and Claude Code so far, not %s", t.Target)
	}
	trialDir := ""
	for i, s := range t.Sessions {
		run := srtrun.Run{Target: t.Target, Argv: s.Run.Argv}
		if err := run.Check(); err != nil {
			return nil, "", err
		}
		dir, _ := run.TrialDir()
		d := filepath.Dir(dir) // the session's settings are in trialDir/session-NONCE
		if i == 0 {
			trialDir = d
			user, _, _ = parts.AsAccount(s.Run.Argv, "")
		}
		if d != trialDir || !strings.HasPrefix(s.Workspace, trialDir+"/") {
			return nil, "", fmt.Errorf("the sessions did not run under one trial directory (%s, %s)", trialDir, s.Workspace)
		}
		settings, err := srtrun.Relocate(s.Settings, trialDir)
		if err != nil {
			return nil, "", err
		}
		out = append(out, session{settings: settings, workspace: strings.TrimPrefix(s.Workspace, trialDir+"/")})
	}
	return out, user, nil
}

const header = `#
# Needs root (to run the sandbox as another account, in a network namespace of loopback only that
# the script makes and removes), iproute2, util-linux (setpriv) and the sandbox: SANDBOX=/path/to/srt
# (default: srt on PATH). Each round starts the trial's %[1]d sessions at once, %[2]s, each
# with its session's settings (their directory the round's), running a command that waits a
# second; once all have ended, the workspace must be as it was before the round, and each session
# must have run its command. It does that ROUNDS times (default 20): what goes wrong shows in a
# fraction of rounds only. It makes no network request and removes what it made.
# Exit 1: some round left the workspace changed, or some session did not run its command. 0: none.
# 2: could not tell.
set -eu
`

// Script is the reproducer of a concurrency scenario as the trial rec ran it; the error says why
// there is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	t, err := find(rec, scenario)
	if err != nil {
		return "", err
	}
	if t.Target == "claude-code" {
		return claudescript.ConcScript(t.Raw, t.Shared, scenario, t.TargetVersion, why)
	}
	ss, user, err := t.sessions()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, t.Target, t.TargetVersion, why)
	t.Broken.Note(&b)
	where := "each in a workspace of its own"
	if t.Shared {
		where = "in one workspace"
	}
	w(header, len(ss), where)
	w("SANDBOX=${SANDBOX:-srt}\nRUN_AS=${RUN_AS:-%s}\nROUNDS=${ROUNDS:-20}\n", user)
	b.WriteString(parts.AccountPrelude(`command -v ip >/dev/null 2>&1 || { echo "no ip (iproute2): the sessions run in a network namespace of their own" >&2; exit 2; }`))
	b.WriteString(`net=reprok$$
trap 'set +e; ip netns pids "$net" 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del "$net" 2>/dev/null; rm -rf "$w"' EXIT
ip netns add "$net"
ip -n "$net" link set lo up
mkdir -p "$w/home"
chown "$RUN_AS" "$w/home"
`)
	for i, s := range ss {
		w("cat > \"$w/settings-%d.json\" <<'SETTINGS'\n%s\nSETTINGS\n", i+1, s.settings)
	}
	var wss []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s.workspace] {
			seen[s.workspace] = true
			wss = append(wss, parts.ShellSafe(s.workspace))
		}
	}
	w("# round R: the sessions at once under $w/rR, which stands in the trial's directory.\nround() {\n  rd=\"$w/r$1\"\n")
	w("  for ws in %s; do mkdir -p \"$rd/$ws/.sandcheck\"; done\n", strings.Join(wss, " "))
	w("  chown -R \"$RUN_AS\" \"$rd\"\n  ( cd \"$rd\" && find %s | sort ) > \"$rd.before\"\n", strings.Join(wss, " "))
	w("  pids=\n")
	for i, s := range ss {
		w("  mkdir -p \"$rd/s%[1]d/tmp\"; sed \"s|@DIR@|$rd|g\" \"$w/settings-%[1]d.json\" > \"$rd/s%[1]d/settings.json\"; chown -R \"$RUN_AS\" \"$rd/s%[1]d\"\n", i+1)
		w("  ( cd \"$rd/%s\" && ip netns exec \"$net\" setpriv --reuid=\"$RUN_AS\" --regid=\"$(id -g \"$RUN_AS\")\" --init-groups \\\n", parts.ShellSafe(s.workspace))
		w("      env -i PATH=\"$PATH\" HOME=\"$w/home\" USER=\"$RUN_AS\" LOGNAME=\"$RUN_AS\" TMPDIR=\"$rd/s%[1]d/tmp\" LANG=C.UTF-8 \\\n", i+1)
		w("      \"$SANDBOX\" --settings \"$rd/s%[1]d/settings.json\" -c 'sleep 1; echo repro-ran' > \"$rd/s%[1]d.out\" 2>&1 ) &\n  pids=\"$pids $!\"\n", i+1)
	}
	b.WriteString(`  wait $pids || true
  ( cd "$rd" && find ` + strings.Join(wss, " ") + ` | sort ) > "$rd.after"
}
residue=0 failed=0 r=0
while [ $r -lt "$ROUNDS" ]; do
  r=$((r + 1))
  round $r
` + parts.RoundResidue + `  for out in "$w/r$r"/s*.out; do
    grep -q '^repro-ran$' "$out" && continue
    failed=$((failed + 1))
    [ $failed -gt 1 ] || { echo "-- round $r: a session did not run its command; the sandbox said:"; cat "$out"; }
  done
done
echo "rounds that left the workspace changed: $residue of $ROUNDS; sessions that did not run their command: $failed of $((ROUNDS * ` + fmt.Sprint(len(ss)) + `))"
if [ "$residue" -gt 0 ] || [ "$failed" -gt 0 ]; then
  echo "BUG: sessions started together interfere: the workspace is not as it was, or a session could not start"
  exit 1
fi
echo "no bug in $ROUNDS rounds"
exit 0
`)
	return b.String(), nil
}
