package fswrite

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// The reproducer of filesystem/workspace/tmpdir on srt: a write the policy allows, to a file
// under the TMPDIR srt gives the command, fails. srt sets TMPDIR to a directory of its own
// choosing and lists it as writable, but does not make it; where the host has no such directory
// (or the account cannot write it), every file under $TMPDIR fails to open.

const sessionTmp = "filesystem/workspace/tmpdir"

const tmpdirHeader = `#
# Needs root (to run the sandbox as RUN_AS), util-linux (setpriv), and the sandbox:
# SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account the trial
# used; where it does not exist, as root. It makes no network request.
# Exit 1: the bug shows (a write to the sandbox's own $TMPDIR, which its policy allows, failed).
# 0: it does not. 2: could not tell.
set -eu
`

var tmpdirPrelude = parts.AccountPrelude() + `mkdir -p "$w/home" "$w/tmp"
`

// tmpdirScript is the reproducer of the session's TMPDIR as the srt trial rec ran it.
func tmpdirScript(rec model.Record, scenario, why string) (string, error) {
	e, err := readTrial(rec)
	if err != nil {
		return "", err
	}
	if e.Target != "srt" {
		return "", fmt.Errorf("the session's TMPDIR is reproduced on srt so far, not %s", e.Target)
	}
	run := e.srt()
	if err := run.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, tmpdirHeader, tmpdirPrelude); err != nil {
		return "", err
	}
	trialDir, err := run.TrialDir()
	if err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("ws=%s\nmkdir -p \"$ws\"\nchown -R \"$RUN_AS\" \"$w/home\" \"$w/tmp\" \"$ws\"\n", parts.InScript(e.Dir, trialDir))
	b.WriteString(parts.AsUser + `echo "== inside the sandbox: where TMPDIR points, and a write there"
out=$( cd "$ws" && as "$SANDBOX" --settings "$w/settings.json" -c 'echo "TMPDIR=$TMPDIR"; if echo repro > "$TMPDIR/repro-$$"; then rm -f "$TMPDIR/repro-$$"; echo WROTE; fi' 2>&1 ) || true
printf '%s\n' "$out"
tmp=$(printf '%s\n' "$out" | sed -n 's/^TMPDIR=//p' | head -n 1)
if [ -z "$tmp" ]; then echo 'could not tell: the command did not run in the sandbox (it printed no TMPDIR)'; exit 2; fi
if printf '%s\n' "$out" | grep -qx WROTE; then echo "no bug: the command wrote under its TMPDIR ($tmp)"; exit 0; fi
if [ -e "$tmp" ]; then state="exists on the host, $(stat -c '%U %a' "$tmp")"; else state="does not exist on the host"; fi
echo "BUG: the sandbox gave the command TMPDIR=$tmp, which its policy lets it write, and a write there failed ($tmp $state)"
exit 1
`)
	return b.String(), nil
}
