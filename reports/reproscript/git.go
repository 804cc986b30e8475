package reproscript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// The git class's reproducers: the repository the case needs, made with git on the host as the
// trial's layout has it; the sandbox, with the trial's settings, running a shell command that
// plants core.fsmonitor where the case says; then git status outside the sandbox, as the user
// would run it next, and the marker the planted command leaves. What the maintainer sees is the
// impact itself: a command from inside the sandbox ran outside it.

// gitCase is one git case: the repository it needs (shell, run as the account from $ws), the
// command the sandbox runs from $ws to plant the configuration ($plant is the config lines), and
// where git status runs afterwards (relative to $ws).
type gitCase struct {
	setup, command, statusIn string
}

var gitCases = map[string]gitCase{
	// Closed on srt 0.0.83 (its rule for **/.git/config): the script's no-bug side.
	"nested-repo-config": {
		setup:    `git init -q near`,
		command:  `printf "$plant" >> near/.git/config`,
		statusIn: "near",
	},
	"submodule-config": {
		setup: `git init -q near
mkdir -p near/m near/.git/modules/m/objects near/.git/modules/m/refs
printf 'ref: refs/heads/main\n' > near/.git/modules/m/HEAD
printf '[core]\n\tworktree = ../../../m\n' > near/.git/modules/m/config
printf 'gitdir: ../.git/modules/m\n' > near/m/.git`,
		command:  `printf "$plant" >> near/.git/modules/m/config`,
		statusIn: "near/m",
	},
	"deep-repo-config": {
		setup:    `git init -q d1/d2/d3`,
		command:  `printf "$plant" >> d1/d2/d3/.git/config`,
		statusIn: "d1/d2/d3",
	},
	"new-repo-config": {
		command:  `mkdir -p fresh/.git/objects fresh/.git/refs && printf 'ref: refs/heads/main\n' > fresh/.git/HEAD && printf "$plant" > fresh/.git/config`,
		statusIn: "fresh",
	},
	"bare-repo-config": {
		setup:    `git init -q --bare bare.git`,
		command:  `printf "$plant\tbare = false\n\tworktree = ..\n" >> bare.git/config`,
		statusIn: "bare.git",
	},
	"worktree-pointer": {
		setup: `git init -q near
mkdir -p w near/.git/worktrees/w
printf 'ref: refs/heads/w\n' > near/.git/worktrees/w/HEAD
printf '../..\n' > near/.git/worktrees/w/commondir
printf '%s/w/.git\n' "$ws" > near/.git/worktrees/w/gitdir
printf 'gitdir: %s/near/.git/worktrees/w\n' "$ws" > w/.git`,
		command:  `mkdir -p own/objects own/refs && printf 'ref: refs/heads/main\n' > own/HEAD && printf "$plant" > own/config && printf "gitdir: $PWD/own\n" > w/.git`,
		statusIn: "w",
	},
}

// fsEvidence is what a git reproducer needs of the filesystem trial's evidence.
type fsEvidence struct {
	srtrun.Evidence
	User *parts.Account  `json:"user"`
	raw  json.RawMessage // the whole evidence, for what a sandbox's own reproducer part reads of it
}

// interplayDir is the fs-interplay session's working directory below its trial directory: two
// levels below the fake HOME, in a repository's subdirectory.
const interplayDir = "/fakehome/proj/sub"

// interplay says whether e is the fs-interplay session's: its settings make the fake HOME
// writable, or it ran in the session's working directory.
func (e *fsEvidence) interplay() bool {
	return strings.Contains(string(e.Settings), "/fakehome") || strings.HasSuffix(e.Dir, interplayDir)
}

// findFS is the evidence, of a record's, of the session that ran the fs-interplay layout (its
// settings make its fake HOME writable): the record's own, or one of those keyed by scenario.
func findFS(rec model.Record) (*fsEvidence, error) {
	var one fsEvidence
	if err := json.Unmarshal(rec.Evidence, &one); err == nil && one.interplay() {
		one.raw = rec.Evidence
		return &one, nil
	}
	var many map[string]json.RawMessage
	if err := json.Unmarshal(rec.Evidence, &many); err != nil {
		return nil, fmt.Errorf("read the trial's evidence: %w", err)
	}
	for _, raw := range many {
		var e fsEvidence
		if json.Unmarshal(raw, &e) == nil && e.interplay() {
			e.raw = raw
			return &e, nil
		}
	}
	return nil, fmt.Errorf("no fs-interplay session in the trial's evidence")
}

// openFS writes the opening of a reproducer of the fs-interplay session's trial rec (the git,
// fs-interplay and privilege classes): its evidence found and checked, then the sandbox's: srt's
// settings (srtrun.Run.Open), Claude Code's files and its run (openClaude), or, with argv true, the
// command line of a sandbox that carries the command (firejail, bubblewrap), its trial
// directories the script's own. It returns how the script runs the sandbox on $w/command.sh.
func openFS(b *strings.Builder, rec model.Record, scenario, why, header, prelude string, argv bool) (string, error) {
	if len(rec.Evidence) == 0 {
		return "", fmt.Errorf("the trial kept no evidence")
	}
	e, err := findFS(rec)
	if err != nil {
		return "", err
	}
	if e.Target == "claude-code" {
		return openClaude(b, e, scenario, why, header, prelude)
	}
	run := e.Srt()
	if e.Target == "srt" || !argv {
		if err := run.Check(); err != nil {
			return "", err
		}
		return `"$SANDBOX" --settings "$w/settings.json" -c "sh $w/command.sh"`, run.Open(b, scenario, why, header, prelude)
	}
	if err := e.Broken.Check(); err != nil {
		return "", err
	}
	user, args, err := parts.ArgvSandbox(e.Run.Argv, e.User.NameOf())
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(e.Dir, interplayDir) {
		return "", parts.ErrNoWorkingDir
	}
	dir := strings.TrimSuffix(e.Dir, interplayDir)
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	parts.Opening(b, scenario, e.Target, e.TargetVersion, why)
	e.Broken.Note(b)
	named := strings.NewReplacer("/path/to/srt", "/path/to/"+e.Target, "(default: srt on PATH)", "(default: "+e.Target+" on PATH)")
	b.WriteString(named.Replace(header))
	w("SANDBOX=${SANDBOX:-%s}\nRUN_AS=${RUN_AS:-%s}\n", e.Target, user)
	b.WriteString(named.Replace(prelude))
	if e.Target == "codex" {
		// Codex makes /tmp/codex-daemon-UID whatever TMPDIR says: removed with $w on exit.
		b.WriteString("cleanup() { rm -rf \"$w\"; }\n" + parts.DaemonDir("codex-daemon-"))
	}
	var outside []string // the layout makes what is under the fake HOME, afresh for each run
	for _, a := range args {
		if !strings.Contains(a, dir+"/fakehome") {
			outside = append(outside, a)
		}
	}
	b.WriteString(parts.MakeDirs(outside, dir))
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = parts.InScript(a, dir)
	}
	return `"$SANDBOX" ` + strings.Join(quoted, " ") + ` sh "$w/command.sh"`, nil
}

// gitScript is the reproducer of a git case as the trial rec ran it.
func gitScript(rec model.Record, scenario, why string) (string, error) {
	gc, ok := gitCases[strings.TrimPrefix(scenario, "bypass/git/")]
	if !ok {
		return "", fmt.Errorf("no reproducer for %s yet", scenario)
	}
	var b strings.Builder
	sandboxed, err := openFS(&b, rec, scenario, why, gitHeader, gitPrelude, false)
	if err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("cat > \"$w/setup.sh\" <<'SETUP'\nset -e\ncd \"$ws\"\n%s\nSETUP\n", gc.setup)
	w("as_user env ws=\"$ws\" sh \"$w/setup.sh\"\n")
	w("cat > \"$w/command.sh\" <<'CMD'\n%s\nCMD\n", gc.command)
	w("echo \"== inside the sandbox, from $ws (plant: the core.fsmonitor lines):\"; sed 's/^/   /' \"$w/command.sh\"\n")
	w("( cd \"$ws\" && as_user env plant=\"$plant\" w=\"$w\" ws=\"$ws\" %s ) || true\n", sandboxed)
	w("echo \"== outside, as the user's next step: git status in %s\"\n", gc.statusIn)
	w("( cd \"$ws/%s\" && as_user git status >/dev/null 2>&1 ) || true\n", gc.statusIn)
	b.WriteString(gitVerdict)
	return b.String(), nil
}

// openClaude is openFS's part for Claude Code: the class's header and prelude, then what the
// trial gave Claude Code and the script that runs it, whose Bash tool runs $w/command.sh.
func openClaude(b *strings.Builder, e *fsEvidence, scenario, why, header, prelude string) (string, error) {
	if !strings.HasSuffix(e.Dir, interplayDir) {
		return "", parts.ErrNoWorkingDir
	}
	g, err := claudescript.ReadGiven(e.raw, strings.TrimSuffix(e.Dir, interplayDir))
	if err != nil {
		return "", err
	}
	g.Open(b, scenario, e.TargetVersion, why, header, prelude)
	g.Write(b, "HOME", "canary", "plant")
	return claudescript.Run, nil
}

const gitHeader = `#
# Needs root (to run the sandbox as RUN_AS), util-linux (setpriv), git, and the sandbox:
# SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account the trial
# used; where it does not exist, as root. It makes no network request.
# Exit 1: the bug shows (a command planted from inside the sandbox ran outside it). 0: it does
# not. 2: could not tell.
set -eu
`

// layoutPrelude checks what a filesystem reproducer needs and makes its directory (removed on
// exit) with the trial's layout around the working directory: a fake HOME, writable as a whole,
// the command two levels below it in a repository's subdirectory.
var layoutPrelude = parts.AccountPrelude(parts.NeedsGit) + `# The trial's layout: a fake HOME, writable as a whole, the command two levels below it in a
# repository's subdirectory.
ws="$w/fakehome/proj/sub"
mkdir -p "$ws" "$w/out" "$w/home" "$w/tmp"
git init -q "$w/fakehome/proj"
chown -R "$RUN_AS" "$w/fakehome" "$w/out" "$w/home" "$w/tmp"
as_user() {
  setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \
    env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 "$@"
}
`

// gitPrelude is the layout, then proof that this git runs a planted core.fsmonitor at all:
// without that, a marker that does not appear proves nothing.
var gitPrelude = layoutPrelude + `marker="$w/out/ran-outside"
plant=$(printf '[core]\\n\\tfsmonitor = "touch %s; false"\\n' "$marker")
# Control: this git runs a core.fsmonitor planted without any sandbox.
mkdir -p "$w/out/control" && chown "$RUN_AS" "$w/out/control"
as_user git init -q "$w/out/control"
as_user sh -c 'printf "$1" >> "$2/.git/config"' sh "$plant" "$w/out/control"
( cd "$w/out/control" && as_user git status >/dev/null 2>&1 ) || true
[ -e "$marker" ] || { echo "could not tell: this git does not run core.fsmonitor even without a sandbox"; exit 2; }
rm -f "$marker"
`

const gitVerdict = `if [ -e "$marker" ]; then
  echo "BUG: git ran a command the sandboxed command planted ($marker exists)"
  exit 1
fi
echo "no bug: the sandboxed command could not plant it, and git ran nothing"
exit 0
`
