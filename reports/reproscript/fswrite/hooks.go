package fswrite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// The reproducer of filesystem/protected/git-hooks-new-repo on srt: a sandbox that protects
// .git/hooks only where a repository exists when it starts lets the command make one ahead of
// the user, hook included. The script shows the impact: the sandboxed command plants
// newrepo/.git/hooks/pre-commit in the trial's workspace, then the account, outside any sandbox,
// makes newrepo a repository and commits there, as a user would next, and the hook runs.

const newRepoHooks = "filesystem/protected/git-hooks-new-repo"

const hooksHeader = `#
# Needs root (to run the sandbox as RUN_AS), util-linux (setpriv), git, and the sandbox:
# SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account the trial
# used; where it does not exist, as root. It makes no network request.
# Exit 1: the bug shows (a hook the sandboxed command planted ran outside the sandbox at the
# next commit). 0: it does not. 2: could not tell.
set -eu
`

// hooksPrelude checks what the script needs and makes its directory $w (removed on exit) with
// the session's workspace, HOME and a directory the planted hook leaves its mark in.
var hooksPrelude = parts.AccountPrelude(parts.NeedsGit) + `mkdir -p "$w/home" "$w/tmp" "$w/marks"
`

// plantHook is plant.sh: `sh plant.sh DIR MARKS` makes DIR/.git/hooks/pre-commit, a hook that
// leaves its mark, MARKS/DIR, when git runs it.
const plantHook = `mkdir -p "$1/.git/hooks" && printf '#!/bin/sh\necho "the hook ran: $(id -un) in $PWD" > "%s/%s"\n' "$2" "$1" > "$1/.git/hooks/pre-commit" && chmod +x "$1/.git/hooks/pre-commit"`

// hooksScript is the reproducer of the new repository's hook as the trial rec ran it, on srt or
// on Claude Code.
func hooksScript(rec model.Record, scenario, why string) (string, error) {
	e, err := readTrial(rec)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var sandboxed, trialDir string
	switch e.Target {
	case "srt":
		run := e.srt()
		if err := run.Check(); err != nil {
			return "", err
		}
		if err := run.Open(&b, scenario, why, hooksHeader, hooksPrelude); err != nil {
			return "", err
		}
		dir, err := run.TrialDir()
		if err != nil {
			return "", err
		}
		trialDir, sandboxed = dir, `as "$SANDBOX" --settings "$w/settings.json" -c "sh $w/plant.sh newrepo $marks"`
	case "claude-code":
		trialDir = filepath.Dir(e.Dir)
		g, err := claudescript.ReadGiven(rec.Evidence, trialDir)
		if err != nil {
			return "", err
		}
		g.Open(&b, scenario, e.TargetVersion, why, hooksHeader, hooksPrelude)
		fmt.Fprintf(&b, "ws=%s\n", parts.InScript(e.Dir, trialDir))
		g.Write(&b, "marks")
		b.WriteString("printf 'sh \"%s/plant.sh\" newrepo \"%s\"\\n' \"$w\" \"$w/marks\" > \"$w/command.sh\"\n")
		sandboxed = `as_user env w="$w" ws="$ws" marks="$marks" ` + claudescript.Run
	default:
		return "", fmt.Errorf("the new repository's hook is reproduced on srt and Claude Code so far, not %s", e.Target)
	}
	if !strings.HasPrefix(e.Dir, trialDir+"/") {
		return "", fmt.Errorf("the trial ran outside its directory (%s): the script lays out only its own", e.Dir)
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("ws=%s\nmarks=\"$w/marks\"\nmkdir -p \"$ws\"\nchown -R \"$RUN_AS\" \"$w/home\" \"$w/tmp\" \"$marks\" \"$ws\"\n", parts.InScript(e.Dir, trialDir))
	w("cat > \"$w/plant.sh\" <<'PLANT'\n%s\nPLANT\n", plantHook)
	b.WriteString(parts.AsUser + `# commit DIR: what the user does next, outside any sandbox: make DIR a repository, commit there.
commit() { ( cd "$ws" && as git init -q "$1" && as git -C "$1" -c user.name=repro -c user.email=repro@example.invalid commit -q --allow-empty -m repro ) >/dev/null 2>&1 || true; }
echo "== without the sandbox: plant the hook in control/, then commit there"
( cd "$ws" && as sh "$w/plant.sh" control "$marks" ) && commit control
if [ ! -s "$marks/control" ]; then echo 'could not tell: this git does not run a pre-commit hook planted without any sandbox either'; exit 2; fi
echo "== inside the sandbox: plant the hook in newrepo/, not a repository yet"
`)
	w("( cd \"$ws\" && %s ) 2>&1 || true\n", sandboxed)
	w(`echo "== outside the sandbox, as the user would next: make newrepo a repository, commit there"
commit newrepo
if [ -s "$marks/newrepo" ]; then echo "BUG: a hook the sandboxed command planted ran outside the sandbox at the next commit:"; cat "$marks/newrepo"; exit 1; fi
echo "no bug: no hook of the sandboxed command's ran"
exit 0
`)
	return b.String(), nil
}
