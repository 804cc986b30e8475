// Package unixscript writes the standalone reproducer of a host unix socket a sandbox lets the
// command connect to (bypass/unix-sockets/host-socket, and uring-host-socket, the socket made and
// connected through io_uring; abstract and uring-abstract, a name of the script's own in its
// network namespace), for sandboxes whose command line carries the command (bubblewrap,
// firejail) and for srt: a socket of the script's own where the trial's was (a docker.sock or an
// ssh-agent's, in a user's terms), a listener on it that logs each line, and the trial's command
// line, its directories the script's own, running a few lines of python3 that connect and send
// one. The same connection is made without the sandbox first: where the account cannot make it
// anyway, the script cannot tell.
package unixscript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// Trial is what the script needs of the trial: the sandbox, its release and fault, its command
// line (and srt's settings), its working directory, the socket's path, and whether the command
// went through io_uring.
type Trial struct {
	Target, Version string
	Broken          parts.Broken
	Argv            []string
	Settings        json.RawMessage
	Dir, Socket     string
	Uring           bool
	// Swap, for the bridge class, is the directory where srt kept its bridge sockets (the
	// session's TMPDIR): the command puts links to the socket in their place and then asks for
	// the allowed host through the proxy, which a relay that follows them carries to the socket.
	Swap string
}

// swapper replaces the unix sockets under DIR by links to SOCK, then sends a GET through the
// proxy the environment names (its credentials too): `python3 swap.py DIR SOCK WORD`.
const swapper = `import os, stat, sys, urllib.request
top, sock, word = sys.argv[1:4]
for d, dirs, files in os.walk(top):
    for f in files:
        p = os.path.join(d, f)
        if p != sock and stat.S_ISSOCK(os.lstat(p).st_mode):
            os.remove(p); os.symlink(sock, p); print("swapped " + p)
try:
    urllib.request.urlopen("http://allowed.sandcheck.test/" + word, timeout=5).read()
except Exception as e:
    print("the request: %s" % e)
`

// server listens on the socket SOCK (@NAME: abstract), world-connectable as the trial's was,
// and appends every line it reads to LOG: `python3 server.py SOCK LOG`.
const server = `import os, socket, sys, threading
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
if path.startswith("@"):
    s.bind("\0" + path[1:])
else:
    s.bind(path)
    os.chmod(path, 0o777)
s.listen(8)
open(log + ".ready", "w").close()
def serve(c):
    data = c.recv(256)
    with open(log, "a") as f:
        f.write(data.decode("latin-1"))
    c.sendall(b"the host's socket answered\n")
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
`

// client connects to the socket SOCK (@NAME: abstract) and sends WORD: `python3 -c CLIENT SOCK WORD`.
const client = `import socket, sys; p = sys.argv[1]; s = socket.socket(socket.AF_UNIX); s.connect("\0" + p[1:] if p[0] == "@" else p); s.sendall(sys.argv[2].encode() + b"\n"); print(s.recv(256).decode().strip())
`

// Script is the reproducer of scenario as the trial ran it; the error says why there is none.
func Script(t Trial, scenario, why string) (string, error) {
	if err := t.Broken.Check(); err != nil {
		return "", err
	}
	if t.Dir == "" {
		return "", parts.ErrNoWorkingDir
	}
	abstract := strings.HasPrefix(t.Socket, "@")
	if !abstract && !strings.HasPrefix(t.Socket, "/") {
		return "", fmt.Errorf("%s connects to %q, neither a socket file nor an abstract socket", scenario, t.Socket)
	}
	if abstract && t.Swap != "" {
		return "", fmt.Errorf("%s links the bridge sockets to an abstract socket, which no link can name", scenario)
	}
	user, args, err := parts.ArgvSandbox(t.Argv, "")
	settings := ""
	if t.Target == "srt" { // its command line takes the command as one string, after its settings
		args = nil
		user, settings, err = srtrun.Run{Target: t.Target, Version: t.Version, Settings: t.Settings, Argv: t.Argv}.Line(t.Dir)
	}
	if err != nil {
		return "", err
	}
	trialDir := filepath.Dir(t.Dir)
	if !abstract && !strings.HasPrefix(t.Socket, trialDir+"/") {
		return "", fmt.Errorf("the trial's socket %s is outside its directory: the script makes only its own", t.Socket)
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, t.Target, t.Version, why)
	t.Broken.Note(&b)
	w(`#
# Needs root (to run the sandbox as another account), util-linux (setpriv), python3 and the
# sandbox: SANDBOX=/path/to/%[1]s (default: %[1]s on PATH). A unix socket of the script's own
# stands where the trial's was, as a docker.sock or an ssh-agent's would, its listener logging
# what reaches it; the sandbox runs as RUN_AS, the account the trial used, with the trial's
# command line (its directories this script's own), and the command connects to the socket and
# sends a line. The same connection is tried without the sandbox first. It makes no network
# request and removes what it made.
# Exit 1: the bug shows (the line reached the host's socket). 0: it does not. 2: could not tell.
`, t.Target)
	b.WriteString(parts.SandboxAs(t.Target, user) + parts.DirBeside(trialDir))
	b.WriteString(`net=
cleanup() {
  kill $server 2>/dev/null
  [ -z "$net" ] || ip netns del "$net" 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
server=
chmod 755 "$w"
`)
	if t.Target == "codex" {
		b.WriteString(parts.DaemonDir("codex-daemon-"))
	}
	b.WriteString(parts.MakeDirs(args, trialDir))
	sock := parts.InScript(t.Socket, trialDir)
	if abstract {
		// An abstract socket is the network namespace's, as the host's D-Bus or X11 ones are:
		// a name of the script's own, in the namespace the script runs in.
		sock = `"@repro-$$"`
	}
	w("sock=%s\nws=%s\nmkdir -p \"$(dirname \"$sock\")\" \"$ws\" \"$w/home\" \"$w/tmp\"\nchown \"$RUN_AS\" \"$ws\" \"$w/home\" \"$w/tmp\"\n", sock, parts.InScript(t.Dir, trialDir))
	w("cat > \"$w/server.py\" <<'PY'\n%sPY\n", server)
	w(`python3 "$w/server.py" "$sock" "$w/log" & server=$!
i=0; until [ -e "$w/log.ready" ]; do i=$((i + 1)); [ $i -lt 100 ] || { echo 'the socket did not come up'; exit 2; }; sleep 0.1; done
`)
	as := parts.AsUser
	if t.Swap != "" {
		// The request goes to the proxy when no relay follows the links: srt's proxy would then
		// look the allowed name up, so everything runs in a network namespace of loopback only.
		w(`net=repro-bridge-$$
ip netns add "$net" && ip -n "$net" link set lo up || { echo "could not make a network namespace (iproute2)"; exit 2; }
`)
		as = strings.Replace(as, "as() { setpriv", `as() { ip netns exec "$net" setpriv`, 1)
	}
	b.WriteString(as)
	how, cl := "", client
	if t.Uring {
		how, cl = " through io_uring (its socket(2) and connect(2) never called)", parts.UringPy
	}
	w("cat > \"$w/client.py\" <<'PY'\n%sPY\nclient=$(cat \"$w/client.py\")\n", cl)
	command := "python3 $w/client.py $sock repro-case"
	if t.Swap != "" {
		if t.Target != "srt" {
			return "", fmt.Errorf("%s: the bridge reproducer drives srt so far, not %s", scenario, t.Target)
		}
		rel, ok := strings.CutPrefix(t.Swap, trialDir+"/")
		if !ok || strings.ContainsAny(rel, " '\"$\\") {
			return "", fmt.Errorf("%s: the bridge sockets' directory %s is not a plain one in the trial's directory", scenario, t.Swap)
		}
		w("cat > \"$w/swap.py\" <<'PY'\n%sPY\n", swapper)
		command = "python3 $w/swap.py $w/" + rel + " $sock repro-case"
	}
	if settings != "" {
		w("cat > \"$w/settings.json\" <<'SETTINGS'\n%s\nSETTINGS\n%s", settings, parts.SetDir(`"$w/settings.json"`, settings))
	}
	w(`echo "== without the sandbox: connect to $sock as $RUN_AS%s"
( cd "$ws" && as python3 -c "$client" "$sock" repro-control ) 2>&1 || true
`, how)
	w(`grep -q repro-control "$w/log" 2>/dev/null || { echo "could not tell: $RUN_AS cannot connect to the socket even without a sandbox"; exit 2; }
echo "== inside the sandbox: the same connection"
`)
	w("( cd \"$ws\" && as \"$SANDBOX\"%s", parts.InScriptArgs(args, trialDir))
	if settings != "" {
		w(" --settings \"$w/settings.json\" -c \"%s\" ) 2>&1 || true\n", command)
	} else {
		w(" python3 -c \"$client\" \"$sock\" repro-case ) 2>&1 || true\n")
	}
	reached := "the sandboxed command reached the host's unix socket $sock"
	if t.Swap != "" {
		reached = "the sandbox's relay carried the command's proxy request to the host's unix socket $sock, linked where its bridge socket was"
	}
	w(`if grep -q repro-case "$w/log"; then echo "BUG: %s (a docker.sock or an ssh-agent's there would be the host)"; exit 1; fi
echo "no bug: the sandboxed command did not reach the host's socket"
exit 0
`, reached)
	return b.String(), nil
}
