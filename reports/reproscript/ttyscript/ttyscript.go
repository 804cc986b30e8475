// Package ttyscript writes the tty class's reproducer (bypass/tty/tiocsti): the sandbox runs on a terminal of the
// script's own, as the caller's (a pseudo-terminal whose slave is the sandbox's stdin and
// controlling terminal, tty.py), and the command pushes a word into its terminal's input with
// TIOCSTI (inject.py). What the terminal's input queue holds after the sandbox ended is what the
// caller's shell would read next as typed by the user. The control runs the command the same way
// without the sandbox, where the push must land.
package ttyscript

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

const ttyHeader = `#
# Needs root (to run the sandbox as RUN_AS), util-linux (setpriv), python3 and the sandbox:
# SANDBOX=/path/to/srt (default: srt on PATH). The sandbox runs as RUN_AS, the account the trial
# used, on a pseudo-terminal of the script's own, as a user's terminal would be. It makes no
# network request.
# Exit 1: the bug shows (the command's input is in the terminal's queue). 0: it does not. 2: could not tell.
set -eu
`

// ttyPy runs a command on a new pseudo-terminal as its controlling terminal (a session of its
// own), copies what the command wrote there to stdout, and after the command ended prints what
// the terminal's input queue holds, unread: QUEUE: '...'.
const ttyPy = `import fcntl, os, select, sys, termios
cmd = sys.argv[1:]
master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.execvp(cmd[0], cmd)
out, done = b"", False
while not done:
    if select.select([master], [], [], 0.1)[0]:
        try:
            out += os.read(master, 4096)
        except OSError:
            pass
    done = os.waitpid(pid, os.WNOHANG)[0] != 0
sys.stdout.write(out.decode(errors="replace"))
attrs = termios.tcgetattr(slave)
attrs[3] &= ~termios.ICANON
attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 0, 0
termios.tcsetattr(slave, termios.TCSANOW, attrs)
try:
    queue = os.read(slave, 4096)
except OSError:
    queue = b""
print("QUEUE: %r" % queue.decode(errors="replace"))
`

// injectPy pushes its argument and a newline into the terminal with TIOCSTI: through stdin,
// else through /dev/tty.
const injectPy = `import fcntl, os, sys, termios
word = sys.argv[1].encode() + b"\n"
def push(fd):
    for c in word:
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
try:
    push(0)
    print("pushed through fd 0")
except OSError as e:
    print("fd 0: TIOCSTI: " + e.strerror)
    try:
        push(os.open("/dev/tty", os.O_RDWR))
        print("pushed through /dev/tty")
    except OSError as e:
        print("/dev/tty: " + e.strerror)
`

// Script is the tty class's reproducer, from srt's run of the trial.
func Script(run srtrun.Run, scenario, why string) (string, error) {
	if err := run.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, ttyHeader, strings.Replace(parts.Prelude, "I make two network namespaces", "I run the sandbox as another account", 1)); err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("cat > \"$w/tty.py\" <<'PY'\n%sPY\n", ttyPy)
	w("cat > \"$w/inject.py\" <<'PY'\n%sPY\n", injectPy)
	w("chmod 644 \"$w/inject.py\"\n")
	b.WriteString(`word="repro-injected-$$"
echo "== control: the command on the script's terminal without any sandbox"
( cd "$w/workspace" && python3 "$w/tty.py" setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups python3 "$w/inject.py" "$word-control" ) > "$w/control.out" 2>&1 || true
sed 's/^/   /' "$w/control.out"
grep -q "QUEUE: .*$word-control" "$w/control.out" || { echo "could not tell: TIOCSTI does not push input even without a sandbox (a kernel with dev.tty.legacy_tiocsti=0?)"; exit 2; }
echo "== inside the sandbox: the same command"
( cd "$w/workspace" && python3 "$w/tty.py" setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 \
    "$SANDBOX" --settings "$w/settings.json" -c "python3 $w/inject.py $word" ) > "$w/case.out" 2>&1 || true
sed 's/^/   /' "$w/case.out"
if grep -q "QUEUE: .*$word" "$w/case.out"; then
  echo "BUG: the sandboxed command pushed input into the caller's terminal, which the caller's shell reads next as typed by the user"
  exit 1
fi
echo "no bug: the caller's terminal holds none of the command's input"
exit 0
`)
	return b.String(), nil
}
