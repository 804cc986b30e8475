package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The bridge class: the way from the command to its proxy, which the command must not be able to
// re-route. A sandbox that relays the command's proxy port to its proxy through a unix socket in
// a directory the command can write (srt keeps them in the caller's TMPDIR, writable inside when
// the settings list it, as they do when allowWrite names /tmp) must not follow a link the command
// puts in a socket's place: its relay runs without the command's seccomp filter, so it would
// carry the command's traffic to any host socket (a docker.sock's, an ssh-agent's). The command
// replaces every socket there by a link to the fixture's host socket, then asks for the allowed
// host through the proxy; the host socket's log decides. A session of its own, and the probe sends
// the case after every other request, the controls' too: the swap breaks the proxy for what follows.
var bridge = bypassClass{
	class: "bridge", title: "the way from the command to its proxy", proxyOnly: true,
	cases: []bypassCase{
		{id: "socket-swap", what: "a link the command puts in place of the proxy's bridge socket (in its writable TMPDIR) does not re-route its proxy traffic to a host socket", allowedOK: true,
			req: func(*nethost.Hosts) crafted.Request {
				return crafted.Request{Via: crafted.ViaHTTP, Host: allowedName, Port: 80, Tamper: crafted.TamperBridge}
			}},
	},
}

// bridgeSession: the allowed host only, the session's TMPDIR writable as well as its workspace.
var bridgeSession = bypassSession{
	title:   "the bridge to the proxy (bridge)",
	classes: []bypassClass{bridge},
	policy:  defaultPolicy,
	session: func(s *targets.Session) {
		if tmp := targets.EnvValue(s.Env, "TMPDIR", ""); tmp != "" {
			s.Policy.WritablePaths = append(s.Policy.WritablePaths, tmp)
		}
	},
}

func init() { bridgeSession.describe() }
