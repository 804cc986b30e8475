// Package codexrun is how a standalone reproducer runs Codex again as a trial ran it: `codex
// sandbox` with the trial's own arguments, its policy among them.
package codexrun

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Run is a proxy request's trial on Codex: `codex sandbox ARGS -- COMMAND`, its policy in
// the -c overrides of ARGS (Codex reads no settings file the trial wrote), run from the trial's
// workspace with a HOME and a TMPDIR of the session's own.
type Run struct {
	Version   string
	Broken    parts.Broken
	Argv      []string
	Workspace string // the run's working directory, the trial's workspace
	// Allowed is the trial's allowed host's address, which the policy may name as it is (a
	// session whose controls go to it by address): the script's own in its place.
	Allowed string
}

// Check says why the trial cannot be reproduced: a fault's finding, a command line that is not
// `codex sandbox ... --` with the command last, a trial that did not record where it ran.
func (r Run) Check() error {
	if err := r.Broken.Check(); err != nil {
		return err
	}
	if r.Workspace == "" {
		return parts.ErrNoWorkingDir
	}
	_, args, err := parts.ArgvSandbox(r.Argv, "")
	if err != nil {
		return err
	}
	if len(args) < 2 || args[0] != "sandbox" || args[len(args)-1] != "--" {
		return fmt.Errorf("the trial's command line is not `codex sandbox ARGS -- COMMAND`: %q", r.Argv)
	}
	return nil
}

// Open writes the script's opening (see srtrun.Run.Open) and the sandbox's own arguments, one per
// line, in $w/args, the trial directory in them becoming $w: `send` reads them back.
func (r Run) Open(b *strings.Builder, scenario, why, header, prelude string) error {
	user, args, err := parts.ArgvSandbox(r.Argv, "")
	if err != nil {
		return err
	}
	trialDir := filepath.Dir(r.Workspace)
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	parts.Opening(b, scenario, "codex", r.Version, why)
	r.Broken.Note(b)
	b.WriteString(header)
	w("# A Codex session is killed CODEX_TIMEOUT seconds after it started (default 60): with a dead\n# proxy in the caller's environment, 0.171.0 outlives its command.\n")
	w("SANDBOX=${SANDBOX:-codex}\nRUN_AS=${RUN_AS:-%s}\n", user)
	b.WriteString(prelude)
	b.WriteString(parts.DaemonDir("codex-daemon-"))
	w("mkdir -p \"$w/codex-tmp\" && chown \"$RUN_AS\" \"$w/codex-tmp\"\n")
	b.WriteString(parts.MakeDirs(args, trialDir))
	w(": > \"$w/args\"\n")
	for _, a := range args[:len(args)-1] {
		if strings.Contains(a, "\n") {
			return fmt.Errorf("an argument of the trial's command line spans lines: %q", a)
		}
		w("printf '%%s\\n' %s >> \"$w/args\"\n", parts.InScriptAddr(a, trialDir, r.Allowed, parts.AllowedAddr))
	}
	return nil
}

// Timeout prefixes a Codex session: one that has not ended a minute (CODEX_TIMEOUT seconds) after
// it started is killed, with everything it started (timeout's process group). 0.171.0 with a
// dead proxy in the caller's environment outlives its command, spinning a core.
const Timeout = "timeout -k 5 \"${CODEX_TIMEOUT:-60}\" "

// Send is send() for Codex's request scripts, as srtrun.Send is srt's. Codex's proxy resolves
// the names on the host side, so it runs inside the namespace whose /etc/hosts is the fixture's.
// A session killed by Timeout says so.
var Send = parts.SendHead + `send() {
  req="python3 $w/request.py $1 $2 $3 $4 $5 $6"
  set --
  while IFS= read -r a; do set -- "$@" "$a"; done < "$w/args"
  ` + parts.InHostAs("$w/codex-tmp") + Timeout + `"$SANDBOX" "$@" -- sh -c "$req" ) ||
    { [ $? != 124 ] || echo "(codex had not ended ${CODEX_TIMEOUT:-60} s after it started: killed)"; }
}
`
