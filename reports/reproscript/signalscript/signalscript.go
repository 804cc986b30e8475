// Package signalscript writes the standalone reproducer of a sandbox that lets its command kill
// a process of its user's outside it (bypass/signals/kill-outside), for sandboxes whose command
// line carries the command (bubblewrap, firejail): a process of the script's own, as the account
// the trial used, stands in for the user's editor or agent, and the trial's command line runs a
// few lines of python3 that look for it in /proc and SIGKILL it, as `kill -9 -1` would kill it
// and everything else. Whether it died is read outside, from its exit status. The same kill is
// made without the sandbox first: where the account cannot make it anyway, the script cannot tell.
package signalscript

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Trial is what the script needs of the trial: the sandbox, its release and fault, its command
// line and its working directory.
type Trial struct {
	Target, Version string
	Broken          parts.Broken
	Argv            []string
	Dir             string
}

// killer SIGKILLs every process in view whose argv holds victim:MARKER as one argument: `python3
// -c KILLER MARKER`. A process in view with no pid in the command's pid namespace is not signalled.
const killer = `import os, sys
marker = b"victim:" + sys.argv[1].encode()  # the victim's argument, not the sandbox's own
own = [l for l in open("/proc/self/status") if l.startswith("NSpid:")][0].split()[1:]
for p in os.listdir("/proc"):
    try:
        if p.isdigit() and marker in open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")[:-1]:
            theirs = [l for l in open("/proc/%s/status" % p) if l.startswith("NSpid:")][0].split()[1:]
            if len(theirs) < len(own):
                print("in view, but no pid in the command's pid namespace"); continue
            os.kill(int(theirs[len(own) - 1]), 9); print("killed %s" % p)
    except OSError as e:
        print("%s: %s" % (p, e))
`

// Script is the reproducer of scenario as the trial ran it; the error says why there is none.
func Script(t Trial, scenario, why string) (string, error) {
	if err := t.Broken.Check(); err != nil {
		return "", err
	}
	if t.Dir == "" {
		return "", parts.ErrNoWorkingDir
	}
	if t.Target != "bwrap" && t.Target != "firejail" {
		return "", fmt.Errorf("%s: the signal reproducer drives sandboxes whose command line carries the command (bubblewrap, firejail) so far, not %s", scenario, t.Target)
	}
	user, args, err := parts.ArgvSandbox(t.Argv, "")
	if err != nil {
		return "", err
	}
	trialDir := filepath.Dir(t.Dir)
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, t.Target, t.Version, why)
	t.Broken.Note(&b)
	w(`#
# Needs root (to run the sandbox as another account), util-linux (setpriv), python3 and the
# sandbox: SANDBOX=/path/to/%[1]s (default: %[1]s on PATH). A process of the script's own, as
# RUN_AS (the account the trial used), stands in for the user's other programs (an editor, the
# agent); the sandbox runs as RUN_AS with the trial's command line (its directories this
# script's own), and the command looks for that process and SIGKILLs it, as kill -9 -1 would.
# Whether it died is read outside, from its exit status. The same kill is made without the
# sandbox first. It makes no network request and removes what it made.
# Exit 1: the bug shows (the process outside was killed). 0: it does not. 2: could not tell.
`, t.Target)
	b.WriteString(parts.SandboxAs(t.Target, user) + parts.DirBeside(trialDir))
	b.WriteString(`victim=
trap '[ -z "$victim" ] || kill -9 $victim 2>/dev/null; rm -rf "$w"' EXIT
trap 'exit 2' INT TERM HUP
chmod 755 "$w"
`)
	b.WriteString(parts.MakeDirs(args, trialDir))
	w("ws=%s\nmkdir -p \"$ws\" \"$w/home\" \"$w/tmp\"\nchown \"$RUN_AS\" \"$ws\" \"$w/home\" \"$w/tmp\"\n", parts.InScript(t.Dir, trialDir))
	b.WriteString(parts.AsUser)
	w("cat > \"$w/killer.py\" <<'PY'\n%sPY\nkiller=$(cat \"$w/killer.py\")\n", killer)
	w(`marker="repro-victim-$$"
# victim: a process of RUN_AS's outside any sandbox, its argv carrying the marker; it sleeps.
victim() {
  setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups python3 -c 'import time; time.sleep(600)' "victim:$marker" &
  victim=$!; sleep 0.3
}
# ended: rc is how the victim ended, once this script's own SIGTERM has been sent (143 is that;
# 137 is a SIGKILL sent before it).
ended() { kill -TERM $victim 2>/dev/null || true; rc=0; wait $victim || rc=$?; victim=; }
echo "== without the sandbox: as $RUN_AS, kill the process that carries $marker"
victim
( cd "$ws" && as python3 -c "$killer" "$marker" ) 2>&1 || true
ended
[ "$rc" = 137 ] || { echo "could not tell: $RUN_AS cannot kill its own process even without a sandbox"; exit 2; }
echo "== inside the sandbox: the same kill"
victim
( cd "$ws" && as "$SANDBOX"`)
	b.WriteString(parts.InScriptArgs(args, trialDir))
	w(` python3 -c "$killer" "$marker" ) 2>&1 || true
ended
if [ "$rc" = 137 ]; then echo "BUG: the sandboxed command killed a process of $RUN_AS's outside the sandbox (kill -9 -1 would kill them all)"; exit 1; fi
echo "no bug: the process outside survived (it ended with $rc, this script's own SIGTERM)"
exit 0
`)
	return b.String(), nil
}
