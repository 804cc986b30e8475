package reproscript

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// The reproducers of the fs-interplay and privilege classes: the trial's layout, made afresh
// for each run; the case's operation first without any sandbox, as the user, which must take
// effect (or the script cannot tell); then the layout again and the sandbox, with the trial's
// settings, running the operation (for a privilege case, after its unmount or remount) from the
// working directory; then the host decides, as the trial did: the file changed or appeared, or
// the canary came back on the sandbox's output.

// fsCase is one case: the operation without a sandbox (control, run as the user from $ws), the
// command the sandbox runs from $ws ("" the control's), the shell condition that is true when
// the operation took effect on the host, and the BUG line's words. Every run has $ws, $w (the
// script's directory), $canary and HOME (the fake one) in its environment; a run's output is in
// $w/stdout.
type fsCase struct {
	control, command, breached, bug string
	// host is what the host does while each run goes ("" nothing), in the background: a case
	// whose file must appear after the sandbox started makes it here when the command asks.
	host string
	// next: after the command's session, the next one starts in $ws/next (the setup class).
	next bool
	// prep is what root does after each fresh layout ("" nothing): the own-binary case copies
	// the sandbox's installation into $ws and runs it from there.
	prep string
}

// setupCase is a setup case: the command plants a link at next/REL whose target, spelled
// through /oldroot (the host's root while bubblewrap sets up), is $w/out/NAME, which the command
// cannot write; the next session starts in next/, and the host looks for the file. The control
// makes the file as the user without a sandbox.
func setupCase(rel, name string) fsCase {
	return fsCase{
		control:  `touch "$w/out/` + name + `"`,
		command:  `mkdir -p "next/$(dirname ` + rel + `)" && ln -s "/oldroot$w/out/` + name + `" next/` + rel + ` && ls -l next/` + rel,
		breached: `[ -e "$w/out/` + name + `" ]`,
		bug:      "the next session's set-up followed the link the sandboxed command planted at next/" + rel + " and made its target, outside every writable path",
		next:     true,
	}
}

// lateFile is the host's side of a late-file case: when the command asks (.ready in $ws), it
// makes the file under $ws with the canary in it and answers (.ready.ack).
func lateFile(rel string) string {
	return `while [ ! -e "$ws/.ready" ]; do sleep 0.05; done; printf '%s\n' "$canary" > "$ws/` + rel + `"; ` +
		`chmod 644 "$ws/` + rel + `"; touch "$ws/.ready.ack"`
}

// readCase reads rel, which the settings deny reading: the canary on the output is the breach.
func readCase(rel string) fsCase {
	return fsCase{
		control:  `cat ` + rel,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command read " + rel + ", which the settings deny reading",
	}
}

// appendCase appends to rel, a start-up file in the working directory the next shell sources.
func appendCase(rel string) fsCase {
	return fsCase{
		control:  `echo 'echo planted-by-the-command' >> ` + rel,
		breached: `grep -q planted-by-the-command "$ws/` + rel + `"`,
		bug:      "the sandboxed command appended to " + rel + ", which a later session sources",
	}
}

// createCase creates rel and its directories: a file that configures a later session.
func createCase(rel string) fsCase {
	return fsCase{
		control:  `mkdir -p "$(dirname ` + rel + `)" && echo planted-by-the-command > ` + rel,
		breached: `grep -q planted-by-the-command "$ws/` + rel + `"`,
		bug:      "the sandboxed command created " + rel + ", which configures a later session",
	}
}

// The userns class: in a user and mount namespace of the command's own (unshare -rm), a step on
// the sandbox's mounts, then the operation they were there to refuse. The control makes the
// operation as the user without a sandbox.
const (
	gitconfigBreached = `grep -q planted-by-the-command "$ws/.gitconfig"`
	keyBreached       = `grep -q "$canary" "$w/stdout"`
	// bindView binds the working directory, without its submounts, at /mnt/v (a tmpfs of the
	// namespace's own over /mnt).
	bindView = `mount -t tmpfs sandcheck-view /mnt && mkdir /mnt/v && mount --bind "$ws" /mnt/v`
	// openTreeView does the same with open_tree(OPEN_TREE_CLONE) and move_mount, the new mount
	// API, from a few lines of python3 on the raw system calls (numbered alike on every
	// architecture since Linux 5.2).
	openTreeView = `mount -t tmpfs sandcheck-view /mnt && mkdir /mnt/v && python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(428, -100, sys.argv[1].encode(), 1 | 0o2000000)
if fd < 0 or libc.syscall(429, fd, b"", -100, b"/mnt/v", 4) != 0:
    sys.exit("open_tree/move_mount: " + os.strerror(ctypes.get_errno()))
' "$ws"`
)

func appendGitconfig(path string) string { return `echo '# planted-by-the-command' >> ` + path }

// usernsCase is a userns case: view (a step in the new namespace), then op, there.
func usernsCase(view, op, breached, did string) fsCase {
	control := strings.ReplaceAll(op, "/mnt/v/", "")
	// Where no user namespace can be made, the operation is tried as the command, as the trial's
	// probe does: a sandbox that lost its protection is caught either way.
	return fsCase{
		control: control,
		command: "if unshare -rm true; then unshare -rm sh -c '" + strings.ReplaceAll(view+"; "+op, "'", `'\''`) + "'; " +
			"else echo 'no user namespace of its own: the operation as the command'; " + control + "; fi",
		breached: breached,
		bug:      "in a user namespace of its own, the sandboxed command " + did + " and got through to what the sandbox protects",
	}
}

// ownCopy copies the node_modules the sandbox lies in ($SANDBOX, or it on PATH) into $ws, owned
// by the user as an npm install leaves it, notes the file its program resolves to in $ws/.entry,
// and has the sandbox run from the copy.
const ownCopy = `SANDBOX0=${SANDBOX0:-$(command -v "$SANDBOX")}
  case $SANDBOX0 in */node_modules/*) ;; *) echo "could not tell: $SANDBOX0 is not in a node_modules"; exit 2 ;; esac
  modules=${SANDBOX0%/node_modules/*}/node_modules
  real=$(readlink -f "$SANDBOX0"); rmod=$(readlink -f "$modules")
  echo "${real#"$rmod"/}" > "$ws/.entry"
  cp -a "$modules" "$ws/node_modules" && chown -R "$RUN_AS" "$ws/node_modules"
  SANDBOX="$ws/node_modules/${SANDBOX0#"$modules"/}"
  echo "== the sandbox runs from its copy in the project's node_modules: $SANDBOX"`

// replaceEntry writes a new file beside the sandbox's entry and renames it over the entry, as an
// installer swaps a program (a write into a running program's file fails: ETXTBSY).
const replaceEntry = `e="node_modules/$(cat .entry)"; printf 'planted-by-the-command\n' > "$e.new" && mv -f "$e.new" "$e" && echo "replaced $e"`

// askLate is the command's side: ask for the late file, wait (10 s at most) for the answer.
const askLate = `touch .ready; i=0; while [ ! -e .ready.ack ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; `

var fsCases = map[string]fsCase{
	"fs-interplay/protected-bashrc-from-subdir": {
		control:  `echo 'echo planted-by-the-command' >> "$HOME/.bashrc"`,
		breached: `grep -q planted-by-the-command "$w/fakehome/.bashrc"`,
		bug:      "the sandboxed command appended to ~/.bashrc, which the next shell runs",
	},
	"fs-interplay/protected-git-hooks-from-subdir": {
		control:  `printf '#!/bin/sh\necho planted-by-the-command\n' > ../.git/hooks/pre-commit`,
		breached: `grep -q planted-by-the-command "$w/fakehome/proj/.git/hooks/pre-commit"`,
		bug:      "the sandboxed command wrote the repository's pre-commit hook, which the next git commit runs",
	},
	"fs-interplay/protected-git-config-from-subdir": {
		control:  `printf '[core]\n\thooksPath = /tmp/planted-by-the-command\n' >> ../.git/config`,
		breached: `grep -q planted-by-the-command "$w/fakehome/proj/.git/config"`,
		bug:      "the sandboxed command appended to the repository's .git/config, which the next git command reads",
	},
	// A read-denied directory must not take a write, even one only the sandbox sees (a tmpfs
	// over it the command can fill): the command says when its write went through.
	"fs-interplay/deny-read-dir-write": {
		control:  `echo planted-by-the-command > private/planted && echo the-write-went-through`,
		breached: `grep -q the-write-went-through "$w/stdout" || [ -e "$ws/private/planted" ]`,
		bug:      "the sandboxed command wrote into a read-denied directory",
	},
	"fs-interplay/deny-read-file":      readCase("creds/token"),
	"fs-interplay/deny-read-dir":       readCase("private/key"),
	"fs-interplay/deny-read-and-write": readCase("both/secret.key"),
	"fs-interplay/deny-read-file-link": {
		control:  `ln creds/token linked-token`,
		breached: `grep -q "$canary" "$ws/linked-token"`,
		bug:      "the sandboxed command hard-linked a read-denied file to a name no rule denies, for the next command to read",
	},
	"persistence/profile":               appendCase(".profile"),
	"persistence/bash-profile":          appendCase(".bash_profile"),
	"persistence/zshrc":                 appendCase(".zshrc"),
	"persistence/zprofile":              appendCase(".zprofile"),
	"persistence/gitmodules":            createCase(".gitmodules"),
	"persistence/ripgreprc":             createCase(".ripgreprc"),
	"persistence/idea":                  createCase(".idea/workspace.xml"),
	"persistence/claude-agents":         createCase(".claude/agents/helper.md"),
	"persistence/claude-settings":       createCase(".claude/settings.json"),
	"persistence/claude-settings-local": createCase(".claude/settings.local.json"),
	"persistence/codex-config":          createCase(".codex/config.toml"),
	"persistence/vscode":                createCase(".vscode/settings.json"),
	// The sandbox run from a copy of its installation in the working directory's node_modules,
	// as a project that depends on it runs it; the command replaces the file it starts from.
	"persistence/own-binary": {
		prep:     ownCopy,
		control:  replaceEntry,
		breached: `tail -c 4096 "$ws/node_modules/$(cat "$ws/.entry")" | grep -q planted-by-the-command`,
		bug:      "the sandboxed command replaced the sandbox's own program in the project's node_modules, which the user's next start of the sandbox runs, unsandboxed",
	},
	"persistence/git-xdg-config": {
		control:  `mkdir -p "$HOME/.config/git" && printf '[core]\n\tfsmonitor = echo planted-by-the-command\n' > "$HOME/.config/git/config"`,
		breached: `grep -q planted-by-the-command "$w/fakehome/.config/git/config"`,
		bug:      "the sandboxed command created ~/.config/git/config, git's global configuration beside ~/.gitconfig: its core.fsmonitor runs on the user's next git command in any repository",
	},
	"fs-interplay/deny-read-file-rename": {
		control:  `mv creds/token stolen-token`,
		breached: `grep -q "$canary" "$ws/stolen-token"`,
		bug:      "the sandboxed command renamed a read-denied file to a name no rule denies, for the next command to read",
	},
	"fs-interplay/deny-read-parent-rename": {
		control:  `mv creds creds-moved`,
		breached: `grep -q "$canary" "$ws/creds-moved/token"`,
		bug:      "the sandboxed command renamed the directory of a read-denied file, for the next command to read the file under the new name",
	},
	"globs/existing": {
		control:  `cat vault/early.key`,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command read a file that a read-denied pattern (vault/*.key) matches",
	},
	"globs/late": {
		control:  askLate + `cat vault/late.key`,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command read a file made after it started under a read-denied pattern (vault/*.key)",
		host:     lateFile("vault/late.key"),
	},
	"globs/late-in-denied-dir": {
		control:  askLate + `cat private/late`,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command read a file made after it started in a read-denied directory (private/)",
		host:     lateFile("private/late"),
	},
	"globs/unanchored": {
		control:  `cat keys/secret.pem`,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command read a file that a read-denied pattern with a wildcard in its first path element names, which the sandbox dropped without a word",
	},
	// The command surveys the processes in view and tries each one less confined than itself
	// (PTRACE_SEIZE, its memory opened for writing); the control, without a sandbox, ptraces
	// its own child.
	"setup/planted-file":   setupCase(".mcp.json", "planted-file"),
	"setup/planted-dir":    setupCase(".idea", "planted-dir"),
	"setup/planted-nested": setupCase(".claude/agents", "planted-nested"),
	"privilege/ptrace-helper": {
		control:  "python3 - control <<'PY'\n" + ptraceSurvey + "PY",
		command:  "python3 - <<'PY'\n" + ptraceSurvey + "PY",
		breached: `grep -q '^TAKEN' "$w/stdout"`,
		bug:      "the sandboxed command could take over (ptrace, or write the memory of) a process in its view that runs without its seccomp filter or with capabilities it lacks: code run through that process is not confined as the command is",
	},
	"privilege/unmount-protected": {
		control:  `echo '# planted-by-the-command' >> .gitconfig`,
		command:  `umount -l "$ws/.gitconfig"; echo '# planted-by-the-command' >> .gitconfig`,
		breached: `grep -q planted-by-the-command "$ws/.gitconfig"`,
		bug:      "the sandboxed command unmounted what protected .gitconfig and appended to it",
	},
	"privilege/unmount-deny-read": {
		control:  `cat private/key`,
		command:  `umount -l "$ws/private"; cat private/key`,
		breached: `grep -q "$canary" "$w/stdout"`,
		bug:      "the sandboxed command unmounted what hid a read-denied directory and read a file in it",
	},
	"userns/unmount-protected":   usernsCase("umount -l \"$ws/.gitconfig\"", appendGitconfig(".gitconfig"), gitconfigBreached, "unmounted what protected .gitconfig"),
	"userns/unmount-deny-read":   usernsCase("umount -l \"$ws/private\"", "cat private/key", keyBreached, "unmounted what hid a read-denied directory"),
	"userns/bind-protected":      usernsCase(bindView, appendGitconfig("/mnt/v/.gitconfig"), gitconfigBreached, "bound the working directory without its submounts"),
	"userns/bind-deny-read":      usernsCase(bindView, "cat /mnt/v/private/key", keyBreached, "bound the working directory without its submounts"),
	"userns/open-tree-protected": usernsCase(openTreeView, appendGitconfig("/mnt/v/.gitconfig"), gitconfigBreached, "cloned the working directory without its submounts (open_tree)"),
	"userns/open-tree-deny-read": usernsCase(openTreeView, "cat /mnt/v/private/key", keyBreached, "cloned the working directory without its submounts (open_tree)"),
	"privilege/remount-rw": {
		control: `echo planted-by-the-command > "$w/out/remounted"`,
		// The mount's own flags first (a read-only bind), then its filesystem's, as the trial's
		// probe tries them; findmnt names stacked mounts once each.
		command: `m=$(findmnt -n -o TARGET -T "$w/out" | head -n1); mount -o remount,bind,rw "$m" || mount -o remount,rw "$m"; ` +
			`echo planted-by-the-command > "$w/out/remounted"`,
		breached: `[ -e "$w/out/remounted" ]`,
		bug:      "the sandboxed command remounted a read-only mount read-write and wrote outside every writable path",
	},
}

// The nesting class's cases are the userns cases and the ptrace of a less confined process, run
// with the trial's settings, which put the sandbox in its weaker mode for nested use.
func init() {
	nested := func(c fsCase) fsCase {
		c.bug = "in the sandbox's weaker mode for nested use, " + c.bug
		return c
	}
	for _, name := range []string{"unmount-protected", "unmount-deny-read", "bind-protected", "bind-deny-read", "open-tree-protected", "open-tree-deny-read"} {
		fsCases["nesting/userns-"+name] = nested(fsCases["userns/"+name])
	}
	fsCases["nesting/ptrace-helper"] = nested(fsCases["privilege/ptrace-helper"])
}

// fsLayout is the part of the trial's layout every case's settings name: the protected files
// and the denied ones, each holding the canary.
const fsLayout = `printf '# original bashrc\n' > "$HOME/.bashrc"
printf '#!/bin/sh\n# original hook\n' > ../.git/hooks/pre-commit
printf '# original .gitconfig\n' > .gitconfig
mkdir -p both private creds vault keys next
for f in both/secret.key private/key creds/token vault/early.key keys/secret.pem; do printf '%s\n' "$canary" > "$f"; done
for f in .profile .bash_profile .zshrc .zprofile; do printf '# original %s\n' "$f" > "$f"; done
`

// fsScript is the reproducer of a fs-interplay or privilege case as the trial rec ran it.
func fsScript(rec model.Record, scenario, why string) (string, error) {
	fc, ok := fsCases[strings.TrimPrefix(scenario, "bypass/")]
	if !ok {
		return "", fmt.Errorf("no reproducer for %s yet", scenario)
	}
	var b strings.Builder
	sandboxed, err := openFS(&b, rec, scenario, why, fsHeader, layoutPrelude, true)
	if err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("cat > \"$w/layout.sh\" <<'LAYOUT'\nset -e\n%sLAYOUT\n", fsLayout)
	w("cat > \"$w/control.sh\" <<'CMD'\n%s\nCMD\n", fc.control)
	w("cat > \"$w/command.sh\" <<'CMD'\n%s\nCMD\n", cmp.Or(fc.command, fc.control))
	w("breached() { %s; }\n", fc.breached)
	w("host_side() { %s; }\n", cmp.Or(fc.host, ":"))
	w("prep() {\n  %s\n}\n", cmp.Or(fc.prep, ":"))
	b.WriteString(strings.Replace(fsRuns, "@SANDBOXED@", sandboxed, 1))
	if fc.next {
		// The same sandbox again, on a command that does nothing: its set-up is what is tried.
		// (Claude Code's run starts in the trial's working directory, trusted there only.)
		again := strings.Replace(sandboxed, "$w/command.sh", "$w/next.sh", 1)
		if again == sandboxed {
			return "", fmt.Errorf("no reproducer for %s on Claude Code yet: its next session would start in a directory the trial did not trust", scenario)
		}
		w("echo true > \"$w/next.sh\"\n")
		w("echo \"== the next session, started in $ws/next: true\"\n")
		w("( cd \"$ws/next\" && as_user env HOME=\"$w/fakehome\" %s ) > \"$w/next.out\" 2>&1 || true\n", again)
		w("echo '-- the next session said:'; sed 's/^/   /' \"$w/next.out\"\n")
	}
	w("if breached; then\n  echo %s\n  exit 1\nfi\n", shellQuote("BUG: "+fc.bug))
	w("echo 'no bug: the operation did not take effect on the host'\nexit 0\n")
	return b.String(), nil
}

// shellQuote is s in single quotes, for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const fsHeader = `#
# Needs root (to run the sandbox as RUN_AS), util-linux (setpriv, findmnt), git, and the
# sandbox: SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account
# the trial used; where it does not exist, as root. It makes no network request.
# Exit 1: the bug shows (the operation took effect on the host). 0: it does not. 2: could not tell.
set -eu
`

// fsRuns lays the trial out afresh, runs the case's operation without a sandbox (it must take
// effect, or a clean run proves nothing), lays it out again and runs it in the sandbox.
const fsRuns = `canary="sandcheck-canary-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
fresh() {
  rm -rf "$w/fakehome" "$w/out" "$w/stdout"
  mkdir -p "$ws" "$w/out"
  git init -q "$w/fakehome/proj"
  chown -R "$RUN_AS" "$w/fakehome" "$w/out"
  ( cd "$ws" && as_user env HOME="$w/fakehome" canary="$canary" sh "$w/layout.sh" )
  prep
}
inside() {
  host_side & hs=$!
  ( cd "$ws" && as_user env HOME="$w/fakehome" w="$w" ws="$ws" canary="$canary" "$@" ) > "$w/stdout" 2>&1 || true
  kill "$hs" 2>/dev/null || true; wait "$hs" 2>/dev/null || true
}
fresh
echo "== control: the operation as $RUN_AS without any sandbox"; sed 's/^/   /' "$w/control.sh"
inside sh "$w/control.sh"
breached || { echo "could not tell: the operation does not take effect even without a sandbox"; exit 2; }
fresh
echo "== inside the sandbox, from $ws:"; sed 's/^/   /' "$w/command.sh"
inside @SANDBOXED@
echo '-- the sandbox said:'; sed 's/^/   /' "$w/stdout"
`

// ptraceSurvey prints TAKEN for each process in view less confined than itself that it could
// ptrace or open the memory of for writing; with the argument control, it ptraces its own child.
const ptraceSurvey = `import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def status(p):
    d = dict(l.split(':\t', 1) for l in open('/proc/%s/status' % p).read().splitlines() if ':\t' in l)
    return int(d['Seccomp']), int(d['CapEff'], 16), d['Name'].strip(), [int(x) for x in d['NSpid'].split()]
def seize(pid):
    return 'ok' if libc.ptrace(0x4206, pid, 0, 0) == 0 else os.strerror(ctypes.get_errno())
def memory(pid):
    try:
        os.close(os.open('/proc/%d/mem' % pid, os.O_RDWR))
        return 'ok'
    except OSError as e:
        return e.strerror
if sys.argv[1:] == ['control']:
    child = subprocess.Popen(['sleep', '30'])
    got = seize(child.pid)
    child.kill()
    print('TAKEN its own child' if got == 'ok' else 'ptrace of its own child: ' + got)
    sys.exit()
# /proc may number processes in an outer pid namespace; ptrace takes the command's own numbers.
seccomp, caps, _, mine = status('self')
level = len(mine) - 1
print('the command: seccomp %d, CapEff %x' % (seccomp, caps))
for p in sorted(int(x) for x in os.listdir('/proc') if x.isdigit()):
    if p == os.getpid():
        continue
    try:
        s, c, name, nspid = status(p)
    except (OSError, KeyError, ValueError):
        continue
    if (s == 0 and seccomp > 0) or c & ~caps:
        got = seize(nspid[level]) if len(nspid) > level else "no pid in the command's pid namespace"
        mem = memory(p)
        taken = 'TAKEN' if 'ok' in (got, mem) else 'refused'
        print('%s %d %s (seccomp %d, CapEff %x): ptrace %s, memory for writing %s' % (taken, p, name, s, c, got, mem))
`
