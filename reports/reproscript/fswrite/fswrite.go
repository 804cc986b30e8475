// Package fswrite writes the standalone reproducer of a filesystem write a sandbox should have
// refused (filesystem/outside/...), for sandboxes whose command line carries the command itself
// (firejail, bubblewrap, Codex): the trial's command line, its directory the script's own, with
// `sh -c` writing a canary where the check wrote, as the trial's account; the host then looks
// for the canary. srt, which takes the command as one string after its settings, gets the
// trial's settings and the write as that string. The same write is tried without the sandbox first: where the account cannot
// make it anyway, the script cannot tell. The hook a new repository gets on srt and Claude Code
// (filesystem/protected/git-hooks-new-repo) has a script of its own, which shows its impact
// (hooks.go), as has srt's TMPDIR that cannot be written (tmpdir.go).
package fswrite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// outsideWrites are the write checks a script reproduces: where each writes, in the script's
// shell ($home is the account's HOME, $w the script's directory in the trial's place).
var outsideWrites = map[string]string{
	"filesystem/outside/home":   `$home/repro-canary-$n`,
	"filesystem/outside/tmp":    `/tmp/repro-canary-$n`,
	"filesystem/outside/etc":    `/etc/repro-canary-$n`,
	"filesystem/outside/parent": `$w/repro-canary-$n`,
}

// fsTrialRun is what a reproducer reads of a filesystem family trial.
type fsTrialRun struct {
	Target        string `json:"target"`
	TargetVersion string `json:"target_version"`
	parts.Broken
	Run struct {
		Argv []string `json:"argv"`
	} `json:"run"`
	Dir  string         `json:"dir"`
	User *parts.Account `json:"user"`
}

// Script is the reproducer of a filesystem/outside/... write as the trial rec ran it; the error
// says why there is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	switch scenario {
	case newRepoHooks:
		return hooksScript(rec, scenario, why)
	case sessionTmp:
		return tmpdirScript(rec, scenario, why)
	}
	where, ok := outsideWrites[scenario]
	if !ok {
		return "", fmt.Errorf("the filesystem reproducer covers writes outside the writable paths (%s) so far, not %s", strings.Join(sortedKeys(outsideWrites), ", "), scenario)
	}
	var e fsTrialRun
	if len(rec.Evidence) == 0 || json.Unmarshal(rec.Evidence, &e) != nil || e.Target == "" {
		return "", fmt.Errorf("the trial kept no filesystem evidence")
	}
	if err := e.Broken.Check(); err != nil {
		return "", err
	}
	if e.Dir == "" {
		return "", parts.ErrNoWorkingDir
	}
	if e.Target == "srt" {
		return srtOutside(rec, scenario, why, where)
	}
	user, args, err := parts.ArgvSandbox(e.Run.Argv, e.User.NameOf())
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(e.Dir)
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, e.Target, e.TargetVersion, why)
	e.Broken.Note(&b)
	w(`#
# Needs root (to run the sandbox as another account), util-linux (setpriv) and the sandbox:
# SANDBOX=/path/to/%[1]s (default: %[1]s on PATH). The sandbox runs as RUN_AS, the account the
# trial used, with the trial's command line (its directories this script's own), and the command
# writes a canary where the check wrote:
#   %[2]s
# The script tries the same write without the sandbox first, removes what it wrote, and makes no
# network request.
# Exit 1: the bug shows (the canary is on the host). 0: it does not. 2: could not tell.
`, e.Target, where)
	b.WriteString(parts.SandboxAs(e.Target, user))
	w(`home=$(getent passwd "$RUN_AS" | cut -d: -f6)
n=$$
w=$(mktemp -d /tmp/repro.XXXXXX)
target=%s
cleanup() { rm -rf "$w"; rm -f "$target"; }
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
chmod 755 "$w"
`, where)
	b.WriteString(parts.MakeDirs(args, dir))
	w("mkdir -p %s\nchown -R \"$RUN_AS\" \"$w\"\n", parts.InScript(e.Dir, dir))
	w("as() { setpriv --reuid=\"$RUN_AS\" --regid=\"$(id -g \"$RUN_AS\")\" --init-groups env -i PATH=\"$PATH\" HOME=\"$home\" USER=\"$RUN_AS\" LOGNAME=\"$RUN_AS\" LANG=C.UTF-8 \"$@\"; }\n")
	writeCanary(&b, parts.InScript(e.Dir, dir), `as "$SANDBOX"`+parts.InScriptArgs(args, dir)+
		` sh -c 'echo repro-canary > "$1" && echo "the sandboxed write to $1 succeeded"' sh "$target"`)
	return b.String(), nil
}

// writeCanary writes the lines that make the write to $target as RUN_AS (as()) from the
// directory ws: first without the sandbox (exit 2 when the account cannot make it anyway), then
// with it, as sandboxed runs it; exit 1 when the canary is on the host.
func writeCanary(b *strings.Builder, ws, sandboxed string) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("echo \"== without the sandbox: write $target as $RUN_AS\"\n")
	w("if ! ( cd %s && as sh -c 'echo repro-canary > \"$1\"' sh \"$target\" ) || ! grep -q repro-canary \"$target\" 2>/dev/null; then\n", ws)
	w("  echo \"could not tell: $RUN_AS cannot write $target even without a sandbox\"; exit 2\nfi\nrm -f \"$target\"\n")
	w("echo \"== inside the sandbox: the same write\"\n")
	w("( cd %s && %s ) 2>&1 || true\n", ws, sandboxed)
	w("if grep -q repro-canary \"$target\" 2>/dev/null; then echo \"BUG: $target holds the canary the sandboxed command wrote, on the host\"; exit 1; fi\n")
	w("echo \"no bug: $target was not written\"\nexit 0\n")
}

// outsideHeader is an outside write's header on srt, after its opening.
const outsideHeader = `#
# Needs root (to run the sandbox as another account), util-linux (setpriv) and the sandbox:
# SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account the trial
# used, with the trial's settings (its directories this script's own), and the command writes a
# canary where the check wrote, outside the paths the settings let it write. The script tries
# the same write without the sandbox first, removes what it wrote, and makes no network request.
# Exit 1: the bug shows (the canary is on the host). 0: it does not. 2: could not tell.
set -eu
`

// srtOutside is the reproducer of a write outside on srt, whose command line takes the command
// as one string after its settings: where is the path the script writes.
func srtOutside(rec model.Record, scenario, why, where string) (string, error) {
	e, err := readTrial(rec)
	if err != nil {
		return "", err
	}
	run := e.srt()
	if err := run.Check(); err != nil {
		return "", err
	}
	trialDir, err := run.TrialDir()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, outsideHeader, parts.AccountPrelude()+"mkdir -p \"$w/home\" \"$w/tmp\"\n"); err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("home=$(getent passwd \"$RUN_AS\" | cut -d: -f6)\nn=$$\ntarget=%s\ntrap 'rm -rf \"$w\"; rm -f \"$target\"' EXIT\n", where)
	w("ws=%s\nmkdir -p \"$ws\"\nchown -R \"$RUN_AS\" \"$w\"\n", parts.InScript(e.Dir, trialDir))
	b.WriteString(parts.AsUser)
	writeCanary(&b, `"$ws"`, `as "$SANDBOX" --settings "$w/settings.json" -c "echo repro-canary > '$target' && echo 'the sandboxed write to $target succeeded'"`)
	return b.String(), nil
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}
