// Package directscript writes the standalone reproducer of a request that uses no proxy (the
// other-egress class's TCP to the denied host over IPv4 or IPv6, to the host's loopback, its own
// address or the metadata address, UDP, ICMP, TCP through io_uring; the dns class's queries to a
// resolver), for sandboxes whose command line carries the command (bubblewrap, firejail, Codex)
// and for srt: the fixture hosts in two network namespaces of the script's own, as a request script has
// them, and the trial's command line (srt's settings), its directories the script's own, run in
// the host namespace as the trial's account, with a few lines of python3 as the command. The same request is made without
// the sandbox first: where it does not reach the fixture even so, the script cannot tell.
package directscript

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/codexrun"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

//go:embed direct.py
var directPy string

//go:embed extras.py
var extrasPy string

// The ways a request goes that this script makes (crafted's).
const (
	viaDirect = "direct"
	viaUDP    = "udp"
	viaICMP   = "icmp"
	viaUring  = "uring-tcp"
	viaDNSUDP = "dns-udp"
	viaDNSTCP = "dns-tcp"
)

// Speaks says whether the script makes requests that go via.
func Speaks(via string) bool {
	switch via {
	case viaDirect, viaUDP, viaICMP, viaUring, viaDNSUDP, viaDNSTCP:
		return true
	}
	return false
}

// Trial is what the script needs of the trial: the sandbox, its release and fault, its command
// line, its working directory, the request (its way, its address, and for a query the zone its
// name is under), and the roles of the trial's fixture addresses.
type Trial struct {
	Target, Version string
	Broken          parts.Broken
	Argv            []string
	Settings        json.RawMessage // srt's
	Dir             string
	Via, Addr, Zone string
	Roles           map[netip.Addr]string // the trial's fixture addresses: model.RoleDenied, ...
}

// RoleDenied6 is the denied host's IPv6 address, a role of the script's own.
const RoleDenied6 = "denied6"

// scriptAddr is where a role's host is in the script's fixture (a shell expression: $b is its
// /24, $v6 its /64).
var scriptAddr = map[string]string{
	model.RoleAllowed:  "$b.2",
	model.RoleDenied:   "$b.3",
	model.RoleSelf:     "$b.1",
	model.RoleLoopback: "127.0.0.1",
	model.RoleMetadata: "169.254.169.254",
	RoleDenied6:        "[$v6::3]",
}

// roleWords name a role's host in a script's messages.
var roleWords = map[string]string{
	model.RoleAllowed:  "the allowed host, around the proxy",
	model.RoleDenied:   "the denied host",
	model.RoleSelf:     "the sandbox's host's own address",
	model.RoleLoopback: "the sandbox's host's loopback",
	model.RoleMetadata: "the metadata address",
	RoleDenied6:        "the denied host's IPv6 address",
}

var zoneName = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)

// target is the request as the script makes it: the address (a shell expression), the log line
// the fixture writes when it arrives, and what it is in words.
type target struct{ addr, logged, what string }

// aim maps the trial's request onto the script's fixture.
func (t Trial) aim() (target, error) {
	if t.Via == viaICMP {
		a, err := netip.ParseAddr(t.Addr)
		if err != nil || t.Roles[a] != model.RoleDenied {
			return target{}, fmt.Errorf("the echo request goes to %s, not the denied host", t.Addr)
		}
		return target{addr: scriptAddr[model.RoleDenied], logged: "denied@icmp", what: "an ICMP echo request to the denied host $b.3"}, nil
	}
	ap, err := netip.ParseAddrPort(t.Addr)
	if err != nil {
		return target{}, fmt.Errorf("the request's address %q: %w", t.Addr, err)
	}
	port := fmt.Sprint(ap.Port())
	switch t.Via {
	case viaDNSUDP, viaDNSTCP:
		// The resolver the sandbox's host uses: the script's own, on the fixture's side.
		proto := strings.TrimPrefix(t.Via, "dns-")
		return target{addr: "$b.4:" + port, logged: "resolver@" + port + "/" + proto,
			what: "a TXT query over " + strings.ToUpper(proto) + " for a name under the denied host's, to the resolver $b.4"}, nil
	case viaUDP:
		if t.Roles[ap.Addr()] != model.RoleDenied || ap.Port() != 7 {
			return target{}, fmt.Errorf("the datagram goes to %s, not the denied host's UDP port 7", t.Addr)
		}
		return target{addr: "$b.3:7", logged: "denied@7/udp", what: "a UDP datagram to the denied host $b.3, port 7"}, nil
	}
	role, ok := t.Roles[ap.Addr()]
	at, known := scriptAddr[role]
	// The allowed host too: the proxy allows it, a request around the proxy is egress all the same.
	if !ok || !known || t.Via == viaUring && !ap.Addr().Is4() {
		return target{}, fmt.Errorf("the request goes to %s, which the script's fixture has no host for", t.Addr)
	}
	name := role
	if role == RoleDenied6 {
		name = model.RoleDenied
	}
	how := "TCP"
	if t.Via == viaUring {
		how = "TCP through io_uring (its socket(2) and connect(2) never called)"
	}
	return target{addr: at + ":" + port, logged: name + "@" + port + " ", what: fmt.Sprintf("%s to %s, %s port %s", how, roleWords[role], at, port)}, nil
}

// header is the script's header comment, after its opening, for sandbox.
func header(sandbox string) string {
	return fmt.Sprintf(`#
# Needs root (two network namespaces and a private /etc/hosts, all removed on exit), iproute2,
# util-linux (setpriv), python3 and the sandbox: SANDBOX=/path/to/%[1]s (default: %[1]s on PATH).
# The sandbox runs as RUN_AS, the account the trial used, with the trial's command line (its
# directories this script's own), in a network namespace of the script's whose only link is to
# the fixture's (198.19.X.0/24, 2001:2:0:X::/64); the command makes one request that uses no
# proxy, as the trial's did. The same request is made without the sandbox first. Nothing leaves
# the machine.
# Exit 1: the bug shows (the request reached the fixture). 0: it does not. 2: could not tell.
set -eu
`, sandbox)
}

// Script is the reproducer of scenario as the trial ran it; the error says why there is none.
func Script(t Trial, scenario, why string) (string, error) {
	if err := t.Broken.Check(); err != nil {
		return "", err
	}
	if t.Target != "bwrap" && t.Target != "firejail" && t.Target != "srt" && t.Target != "codex" {
		return "", fmt.Errorf("%s goes %s, not through a proxy: its reproducer drives srt, Codex and sandboxes whose command line carries the command (bubblewrap, firejail) so far, not %s", scenario, t.Via, t.Target)
	}
	if t.Dir == "" {
		return "", parts.ErrNoWorkingDir
	}
	if !Speaks(t.Via) {
		return "", fmt.Errorf("%s goes %s, which the reproducer does not make yet", scenario, t.Via)
	}
	if (t.Via == viaDNSUDP || t.Via == viaDNSTCP) && !zoneName.MatchString(t.Zone) {
		return "", fmt.Errorf("%s asks for a name under %q, which the script cannot write as it is", scenario, t.Zone)
	}
	aim, err := t.aim()
	if err != nil {
		return "", fmt.Errorf("%s: %w", scenario, err)
	}
	// The request as a command's argv, and as one string a shell runs (srt's), the programs then
	// from their files.
	argv := fmt.Sprintf(`python3 -c "$direct" %s "%s"`, t.Via, aim.addr)
	line := fmt.Sprintf("python3 $w/direct.py %s '%s'", t.Via, aim.addr)
	if t.Via == viaUring {
		argv = fmt.Sprintf(`python3 -c "$uring" "tcp:%s" repro-case`, aim.addr)
		line = fmt.Sprintf("python3 $w/uring.py 'tcp:%s' repro-case", aim.addr)
	}
	if t.Via == viaDNSUDP || t.Via == viaDNSTCP {
		argv += " repro-case." + t.Zone
		line += " repro-case." + t.Zone
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	prelude := strings.ReplaceAll(parts.Prelude, "SANDBOX=/path/to/srt", "SANDBOX=/path/to/"+t.Target)
	var sandboxed string // the line that runs the request in the sandbox
	trialDir := filepath.Dir(t.Dir)
	switch t.Target {
	case "codex": // its arguments, read back from the file its opening writes them to
		run := codexrun.Run{Version: t.Version, Broken: t.Broken, Argv: t.Argv, Workspace: t.Dir}
		if err := run.Check(); err != nil {
			return "", err
		}
		if err := run.Open(&b, scenario, why, header("codex"), prelude); err != nil {
			return "", err
		}
		sandboxed = "set --\nwhile IFS= read -r a; do set -- \"$@\" \"$a\"; done < \"$w/args\"\n" +
			parts.InHostAs("$w/codex-tmp") + codexrun.Timeout + `"$SANDBOX" "$@" -- ` + argv
	case "srt": // its command line takes the command as one string, after its settings (its opening writes them)
		run := srtrun.Run{Target: t.Target, Version: t.Version, Broken: t.Broken, Settings: t.Settings, Argv: t.Argv}
		if err := run.Check(); err != nil {
			return "", err
		}
		if err := run.Open(&b, scenario, why, header("srt"), prelude); err != nil {
			return "", err
		}
		sandboxed = parts.InHostAs("$w/tmp") + `"$SANDBOX" --settings "$w/settings.json" -c "` + line + `"`
	default: // its command line carries the command
		user, args, err := parts.ArgvSandbox(t.Argv, "")
		if err != nil {
			return "", err
		}
		parts.Opening(&b, scenario, t.Target, t.Version, why)
		t.Broken.Note(&b)
		w("%sSANDBOX=${SANDBOX:-%s}\nRUN_AS=${RUN_AS:-%s}\n%s%s", header(t.Target), t.Target, user, prelude, parts.MakeDirs(args, trialDir))
		sandboxed = parts.InHostAs("$w/tmp") + `"$SANDBOX"` + parts.InScriptArgs(args, trialDir) + " " + argv
	}
	w("cat > \"$w/serve.py\" <<'PY'\n%sPY\n", parts.ServePy)
	w("cat > \"$w/extras.py\" <<'PY'\n%sPY\n", extrasPy)
	w("printf '127.0.0.1 localhost\\n::1 localhost\\n' > \"$w/hosts\"\n")
	b.WriteString(parts.Fixture)
	b.WriteString(`# Besides the TCP listeners: the denied host's IPv6 address, its UDP port and ICMP, and a
# resolver, all logged; unprivileged ICMP (a ping socket) allowed in the sandbox's host only.
v6=2001:2:0:${b##*.}
ip -n "$fx" addr add "$b.4/24" dev "f$n"
ip -n "$fx" addr add "$v6::3/64" dev "f$n" nodad
ip -n "$hs" addr add "$v6::1/64" dev "h$n" nodad
ip netns exec "$hs" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
ip netns exec "$fx" python3 "$w/serve.py" "$w/log" "denied@$v6::3:80" &
echo $! >> "$w/pids"
ip netns exec "$fx" python3 "$w/extras.py" "$w/log" "$b.3" "$b.4" &
echo $! >> "$w/pids"
` + parts.AwaitReady(2))
	w("cat > \"$w/direct.py\" <<'PY'\n%sPY\ndirect=$(cat \"$w/direct.py\")\n", directPy)
	w("cat > \"$w/uring.py\" <<'PY'\n%sPY\nuring=$(cat \"$w/uring.py\")\n", parts.UringPy)
	w("echo \"== without the sandbox: as $RUN_AS, %s\"\n", aim.what)
	w("%s%s ) 2>&1 || true\n", parts.InHostAs("$w/tmp"), argv)
	w("sleep 0.3\n")
	w("grep -q '^%s' \"$w/log\" || { echo \"could not tell: the request did not reach the fixture even without the sandbox\"; exit 2; }\n", aim.logged)
	w(": > \"$w/log\"\necho \"== inside the sandbox: the same request\"\n")
	w("%s ) 2>&1 || true\n", sandboxed)
	w("sleep 0.3\necho '-- the fixture logged:'; cat \"$w/log\"\n")
	w("if grep -q '^%s' \"$w/log\"; then echo \"BUG: the sandboxed command's request reached the fixture: %s\"; exit 1; fi\n", aim.logged, aim.what)
	w("echo 'no bug: the request did not reach the fixture, as it did without the sandbox'\nexit 0\n")
	return b.String(), nil
}
