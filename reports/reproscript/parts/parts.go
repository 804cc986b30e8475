// Package parts holds what every standalone reproducer script shares: the opening that checks for
// root and the sandbox and makes the script's directory, the fixture hosts in two network
// namespaces of the script's own (serve.py), and the quoting that puts a trial's values in a
// script.
package parts

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// ServePy is the fixture hosts' server (serve.py).
//
//go:embed serve.py
var ServePy string

// ParentPy is a parent proxy that enforces nothing (parent.py), for a trial whose sandbox was
// told to send what it allows through one.
//
//go:embed parent.py
var ParentPy string

// UringPy connects to a unix socket or a TCP address through io_uring and sends a line
// (uring.py): `python3 uring.py SOCK|tcp:IPV4:PORT WORD`.
//
//go:embed uring.py
var UringPy string

// Domain is the fixture hosts' domain.
const Domain = "sandcheck.test"

// Header is a request script's header: what it needs and what its exit means.
const Header = `#
# Needs root (two network namespaces and a private /etc/hosts, all removed on exit), iproute2,
# util-linux (setpriv), python3 and the sandbox: SANDBOX=/path/to/srt (default: srt on PATH).
# The sandbox runs as RUN_AS, the account the trial used; where it does not exist, as root.
# Nothing leaves the machine: the sandbox's host is a network namespace of the script's whose
# only link is to the fixture's (198.19.X.0/24), and names resolve through a hosts file of its own.
# Exit 1: the bug shows. 0: it does not. 2: could not tell.
set -eu
`

// Prelude checks for root and the sandbox, makes the script's directory $w (removed on exit)
// with the session's workspace, TMPDIR and HOME, and picks the fixture's /24 ($b).
const Prelude = `[ "$(id -u)" = 0 ] || { echo "run me as root: I make two network namespaces" >&2; exit 2; }
command -v "$SANDBOX" >/dev/null 2>&1 || { echo "no sandbox at $SANDBOX: set SANDBOX=/path/to/srt" >&2; exit 2; }
SANDBOX=$(command -v "$SANDBOX")
if ! id "$RUN_AS" >/dev/null 2>&1; then echo "no account $RUN_AS: the sandbox runs as root" >&2; RUN_AS=root; fi
n=$$
fx=reprofx$n
hs=reprohs$n
w=$(mktemp -d /tmp/repro.XXXXXX)
cleanup() {
  set +e
  for p in $(cat "$w/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
  ip netns del "$fx" 2>/dev/null
  ip netns del "$hs" 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
chmod 755 "$w"
# The session's own HOME and TMPDIR, as a trial gives them: what the sandbox writes there (srt
# asks npm, which logs under HOME) goes with the script.
mkdir -p "$w/workspace" "$w/tmp" "$w/home"
chown "$RUN_AS" "$w/workspace" "$w/tmp" "$w/home"
b=198.19.$(( $(od -An -N1 -tu1 /dev/urandom) % 250 + 1 ))
printf 'nameserver 127.0.0.1\n' > "$w/resolv.conf"
`

// AccountPrelude is the opening of a script that runs the sandbox as RUN_AS with no network of
// its own: it checks for root and the sandbox, then runs needs (a line each that exits 2 when a
// tool the script needs is missing), and makes the script's directory $w, removed on exit.
func AccountPrelude(needs ...string) string {
	var b strings.Builder
	b.WriteString(`[ "$(id -u)" = 0 ] || { echo "run me as root: the sandbox runs as $RUN_AS" >&2; exit 2; }
command -v "$SANDBOX" >/dev/null 2>&1 || { echo "no sandbox at $SANDBOX: set SANDBOX=/path/to/srt" >&2; exit 2; }
`)
	for _, n := range needs {
		b.WriteString(n + "\n")
	}
	b.WriteString(`SANDBOX=$(command -v "$SANDBOX")
if ! id "$RUN_AS" >/dev/null 2>&1; then echo "no account $RUN_AS: the sandbox runs as root" >&2; RUN_AS=root; fi
w=$(mktemp -d /tmp/repro.XXXXXX)
trap 'rm -rf "$w"' EXIT
trap 'exit 2' INT TERM HUP
chmod 755 "$w"
`)
	return b.String()
}

// SandboxAs opens a script whose command line carries the command, after its header comment:
// SANDBOX and RUN_AS (the trial's sandbox and account unless the caller sets them), then the
// checks for root (to run the sandbox as RUN_AS), the sandbox (resolved to its path) and the
// account (root when there is none).
func SandboxAs(sandbox, user string) string {
	return fmt.Sprintf(`set -eu
SANDBOX=${SANDBOX:-%s}
RUN_AS=${RUN_AS:-%s}
[ "$(id -u)" = 0 ] || { echo "run me as root: I run the sandbox as $RUN_AS" >&2; exit 2; }
command -v "$SANDBOX" >/dev/null 2>&1 || { echo "no sandbox at $SANDBOX: set SANDBOX=/path/to/it" >&2; exit 2; }
SANDBOX=$(command -v "$SANDBOX")
if ! id "$RUN_AS" >/dev/null 2>&1; then echo "no account $RUN_AS: the sandbox runs as root" >&2; RUN_AS=root; fi
`, sandbox, user)
}

// DirBeside makes the script's directory, $w, beside where the trial's directory was when that
// exists, else in /tmp.
func DirBeside(trialDir string) string {
	return `# The script's directory stands in the trial's, beside where it was when that exists: the
# sandbox's arguments (a tmpfs on /tmp, say) see the two alike.
parent='` + strings.ReplaceAll(filepath.Dir(trialDir), "'", `'\''`) + `'
[ -d "$parent" ] || parent=/tmp
w=$(mktemp -d "$parent/repro.XXXXXX")
`
}

// NeedsGit is AccountPrelude's line for a script whose bug is git running what was planted.
const NeedsGit = `command -v git >/dev/null 2>&1 || { echo "no git: the bug is git running what the sandbox let the command plant" >&2; exit 2; }`

// Fixture starts the fixture hosts: two network namespaces, $hs the sandbox's host and $fx the
// fixture's, serve.py logging to $w/log.
var Fixture = `ip netns add "$fx"
ip netns add "$hs"
ip link add "h$n" netns "$hs" type veth peer name "f$n" netns "$fx"
ip -n "$hs" link set lo up
ip -n "$hs" link set "h$n" up
ip -n "$hs" addr add "$b.1/24" dev "h$n"
ip -n "$hs" route add 169.254.169.254/32 dev "h$n"
ip -n "$fx" link set lo up
ip -n "$fx" link set "f$n" up
for a in "$b.2/24" "$b.3/24" 169.254.169.254/32; do ip -n "$fx" addr add "$a" dev "f$n"; done
: > "$w/log"
ip netns exec "$fx" python3 "$w/serve.py" "$w/log" "allowed@$b.2:80" "allowed@$b.2:8080" "denied@$b.3:80" "metadata@169.254.169.254:80" &
echo $! >> "$w/pids"
ip netns exec "$hs" python3 "$w/serve.py" "$w/log" "loopback@127.0.0.1:80" "loopback@127.0.0.1:8080" "self@$b.1:80" &
echo $! >> "$w/pids"
` + AwaitReady(2)

// AwaitReady is the lines that wait until n fixture servers have written "ready" to $w/log
// (exit 2 after 10 s), then empty it.
func AwaitReady(n int) string {
	return fmt.Sprintf(`i=0
until [ "$(grep -c '^ready' "$w/log")" = %d ]; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "the fixture did not start" >&2; exit 2; }
  sleep 0.1
done
: > "$w/log"
`, n)
}

// DaemonDir is the script's lines that remove on exit, with everything else, the per-uid
// directory a sandbox keeps in /tmp whatever TMPDIR says (Claude Code's cc-daemon-UID, Codex's
// codex-daemon-UID), unless it was there before. After Prelude, whose trap it replaces.
func DaemonDir(prefix string) string {
	return "daemon=/tmp/" + prefix + "$(id -u \"$RUN_AS\")\nkeep=0; [ ! -e \"$daemon\" ] || keep=1\n" +
		"trap 'cleanup; [ $keep = 1 ] || rm -rf \"$daemon\"' EXIT\n"
}

// OneLine is s on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ShellSafe is s with the characters a double-quoted shell string would expand made harmless.
func ShellSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '$' || r == '`' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

// InScript quotes s for a script's shell, the trial directory in it becoming $w.
func InScript(s, trialDir string) string {
	parts := strings.Split(s, trialDir)
	for i, p := range parts {
		parts[i] = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return strings.Join(parts, `"$w"`)
}

// InScriptArgs is the sandbox's arguments of a trial's command line as a script passes them,
// each InScript and led by a space: what follows "$SANDBOX" on the script's line.
func InScriptArgs(args []string, trialDir string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(" " + InScript(a, trialDir))
	}
	return b.String()
}

// AllowedAddr is the script's allowed host's address, a shell expression ($b is the script's /24).
const AllowedAddr = "$b.2"

// InScriptAddr is InScript with addr, an address of the trial's fixture, as the script's own
// (expr, a shell expression such as AllowedAddr) wherever it stands alone, not as the start of a
// longer number.
func InScriptAddr(s, trialDir, addr, expr string) string {
	if addr == "" {
		return InScript(s, trialDir)
	}
	var b strings.Builder
	pieces := strings.Split(s, addr)
	literal := pieces[0]
	for _, p := range pieces[1:] {
		if p != "" && p[0] >= '0' && p[0] <= '9' { // a longer number: the address was not there
			literal += addr + p
			continue
		}
		b.WriteString(InScript(literal, trialDir) + `"` + expr + `"`)
		literal = p
	}
	return b.String() + InScript(literal, trialDir)
}

// Relocated is text with the trial directory in it as @DIR@, and as @DIR?@ where a pattern spells
// it with a wildcard for the last letter of its first element (the globs class's unanchored
// pattern): placeholders the script replaces with its own directory (SetDir).
func Relocated(text, trialDir string) string {
	text = strings.ReplaceAll(text, trialDir, "@DIR@")
	if first, rest, ok := strings.Cut(strings.TrimPrefix(trialDir, "/"), "/"); ok && first != "" {
		text = strings.ReplaceAll(text, "/"+first[:len(first)-1]+"?/"+rest, "@DIR?@")
	}
	return text
}

// SetDir is the script's lines that put its own directory, $w, in the placeholders of file (as
// the shell reads it), which holds text (Relocated); @DIR?@ as the wildcard spelling of $w.
func SetDir(file, text string) string {
	lines := "sed -i \"s|@DIR@|$w|g\" " + file + "\n"
	if strings.Contains(text, "@DIR?@") {
		lines += "first=${w#/}; first=${first%%/*}\nsed -i \"s|@DIR?@|/${first%?}?${w#/$first}|g\" " + file + "\n"
	}
	return lines
}

// ProbeVerb is the probe's subcommand: the word after the probe's executable, so the element
// before it is where the trial's command starts on a sandbox's command line.
const ProbeVerb = "__sandcheck_probe"

// AsAccount strips the account switch off a trial's command line, [setpriv ... --] SANDBOX ...:
// the account the sandbox ran as (account, when setpriv switched to it; the dedicated one if
// unnamed; root without setpriv) and the sandbox's own command line.
func AsAccount(argv []string, account string) (user string, sandbox []string, err error) {
	if len(argv) == 0 || argv[0] != "setpriv" {
		return "root", argv, nil
	}
	i := slices.Index(argv, "--")
	if i < 0 {
		return "", nil, fmt.Errorf("the trial's command line has setpriv without --: %q", argv)
	}
	if account == "" {
		account = model.DedicatedUser
	}
	return account, argv[i+1:], nil
}

// ArgvSandbox splits a trial's command line, [setpriv ... --] SANDBOX ARGS... PROBE VERB SPEC, for
// a sandbox whose command line carries the command (firejail, bubblewrap, Codex): the account it
// ran as (AsAccount) and the sandbox's own arguments.
func ArgvSandbox(argv []string, account string) (user string, args []string, err error) {
	user, sandbox, err := AsAccount(argv, account)
	if err != nil {
		return "", nil, err
	}
	at := slices.Index(sandbox, ProbeVerb)
	if at < 2 || at != len(sandbox)-2 {
		return "", nil, fmt.Errorf("the trial's command line does not end in the command (a sandbox that takes it as one string, as srt does, has no such reproducer yet): %q", argv)
	}
	return user, sandbox[1 : at-1], nil
}

// MakeDirs is the script's lines that make again, under $w, the trial's directories the
// sandbox's arguments name (--read-write=DIR, a bind's source).
func MakeDirs(args []string, trialDir string) string {
	var b strings.Builder
	made := map[string]bool{}
	for _, a := range args {
		if i := strings.Index(a, trialDir+"/"); i >= 0 && !made[a[i:]] {
			made[a[i:]] = true
			fmt.Fprintf(&b, "mkdir -p %s\n", InScript(a[i:], trialDir))
		}
	}
	return b.String()
}

// Opening writes a script's first lines: what it reproduces on which sandbox and release, and
// what the trial saw (why, when known).
func Opening(b *strings.Builder, scenario, sandbox, version, why string) {
	fmt.Fprintf(b, "#!/bin/sh\n# Reproducer of %s on %s (%s), written by sandcheck from a trial that showed it.\n", scenario, sandbox, version)
	if why != "" {
		fmt.Fprintf(b, "# What the trial saw: %s\n", OneLine(why))
	}
}

// Broken is the fault of sandcheck's a trial ran under, as its evidence names it: none for a
// healthy sandbox.
type Broken struct {
	Fault string `json:"fault"`
	// FaultTools are the tools the fault replaced by broken ones first on PATH, when that is all
	// it changed.
	FaultTools []string `json:"fault_tools"`
	// FaultSettings: the fault changed the sandbox's settings and nothing else; the evidence
	// keeps them as the fault left them.
	FaultSettings bool `json:"fault_settings"`
	// FaultProxy: the fault stood a proxy of its own in for the sandbox's, on the ports the
	// settings name, and changed nothing else: a script that runs PROXY in its place
	// (srtrun.Run.Proxy) is written all the same.
	FaultProxy bool `json:"fault_proxy"`
}

// Check says why a trial under a fault gets no script: its finding is the fault's, and the
// script would have to carry sandcheck's own parts. A fault that only put broken tools first on
// PATH is no reason: the script runs whatever sandbox PATH gives it; nor one that only changed
// the settings, which the script gives the sandbox as the trial did (see Note).
func (f Broken) Check() error {
	if f.Fault == "" || len(f.FaultTools) > 0 || f.FaultSettings {
		return nil
	}
	return fmt.Errorf("the finding is the fault's (%s), made by sandcheck's own parts: its reproducer would be sandcheck's", f.Fault)
}

// Note writes, under a script's opening, that its trial's finding was made by a fault that broke
// tools on PATH, and how to see it again: the script runs the sandbox with whatever tools PATH
// finds. Nothing for a healthy trial.
func (f Broken) Note(b *strings.Builder) {
	if f.Fault == "" {
		return
	}
	if f.FaultProxy {
		fmt.Fprintf(b, "# The trial ran under sandcheck's fault %s, which stood a proxy of sandcheck's in for the\n", f.Fault)
		b.WriteString("# sandbox's own, on the ports the settings below name: the finding is that proxy's. This\n")
		b.WriteString("# script runs PROXY in the sandbox's place on those ports: given the same proxy it shows the\n")
		b.WriteString("# finding; given one without the bug, it does not.\n")
		return
	}
	if f.FaultSettings {
		fmt.Fprintf(b, "# The trial ran under sandcheck's fault %s, which changed the sandbox's settings and nothing\n", f.Fault)
		b.WriteString("# else: the settings below are the fault's, so this script shows the finding with the healthy\n")
		b.WriteString("# sandbox. The script of a trial without the fault, its own settings, does not.\n")
		return
	}
	tools := strings.Join(f.FaultTools, ", ")
	fmt.Fprintf(b, "# The trial ran under sandcheck's fault %s, which put a broken %s first on PATH: the\n", f.Fault, tools)
	fmt.Fprintf(b, "# finding is that fault's. Run with the same broken %s first on PATH, this script shows\n", tools)
	fmt.Fprintf(b, "# it; with the healthy %s, it does not.\n", tools)
}

// ErrNoWorkingDir is why a trial from an older sandcheck's journal gets no script: its evidence
// lacks the run's working directory, without which a script cannot lay the trial out again.
var ErrNoWorkingDir = errors.New("the trial's evidence does not record its working directory (a journal from an older sandcheck): run it again")

// Account is the account a trial's evidence names (its "user").
type Account struct {
	Name string `json:"name"`
}

// NameOf is a's name, "" when the evidence names none.
func (a *Account) NameOf() string {
	if a == nil {
		return ""
	}
	return a.Name
}

// SessionEvidence is the evidence of the session of rec that ran scenario: the one keyed by its
// name when the trial ran several (a family's scenarios, each a session of its own), else the
// record's own.
func SessionEvidence(rec model.Record, scenario string) (json.RawMessage, error) {
	if len(rec.Evidence) == 0 {
		return nil, errors.New("the trial kept no evidence")
	}
	var many map[string]json.RawMessage
	if json.Unmarshal(rec.Evidence, &many) == nil && many[scenario] != nil {
		return many[scenario], nil
	}
	return rec.Evidence, nil
}

// AsUser is a script's as(): a command as RUN_AS with a clean environment, the script's HOME and
// TMPDIR ($w/home, $w/tmp), outside any sandbox or in the one it names.
const AsUser = `as() { setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 "$@"; }
`
