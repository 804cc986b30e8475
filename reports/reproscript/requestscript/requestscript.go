// Package requestscript writes the standalone reproducers whose bug a request shows: a bypass
// case's request through the sandbox's proxy (HTTP, CONNECT, SOCKS5), sent byte for byte as the
// trial sent it after the same request to the allowed host (the control), or to a host unix
// socket (unixscript); the network family's channels (channel.go); and the conditions a user's
// configuration sets around a request for the allowed host (conditions.go). It hands the other
// ways a case goes to their own packages (directscript, signalscript, ttyscript). The sandbox is srt (srtrun), Codex (codexrun) or Claude Code
// (claudescript); the fixture hosts are two network namespaces of the script's own (parts).
package requestscript

import (
	"cmp"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/codexrun"
	"github.com/sandcheck/sandcheck/reports/reproscript/directscript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/signalscript"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
	"github.com/sandcheck/sandcheck/reports/reproscript/ttyscript"
	"github.com/sandcheck/sandcheck/reports/reproscript/unixscript"
)

//go:embed request.py
var requestPy string

// evidence is what a reproducer needs of a bypass trial's evidence.
type evidence struct {
	srtrun.Evidence
	Names []struct {
		Name, Role string
	} `json:"names"`
	Cases []struct {
		Name          string   `json:"name"`
		AllowedOK     bool     `json:"allowed_ok"`
		Control       bool     `json:"control"`
		ThroughParent bool     `json:"through_parent"`
		Raw           request  `json:"raw"`
		MustCarry     []string `json:"must_carry"`
		MustNotCarry  []string `json:"must_not_carry"`
	} `json:"cases"`
	Canaries []canary `json:"canaries"` // the secrets the trial planted (secrets.go)
	Faults   []string `json:"faults"`   // the scenario's own (the fail-closed family's conditions)
	Policy   struct {
		ParentProxy string // the parent proxy the sandbox was given (settings, or the caller's proxy variables)
	} `json:"policy"`
	Allowed struct {
		IP string `json:"ip"`
	} `json:"allowed"` // the allowed host, which a session's controls may name by address
	Denied struct {
		IP string `json:"ip"`
	} `json:"denied"`
	Extra struct {
		DeniedV6                 string `json:"denied_v6"`
		Loopback, Metadata, Self struct {
			IP string `json:"ip"`
		}
	} `json:"extra"` // the other hosts a request that uses no proxy may aim at
	raw json.RawMessage // the whole, for a sandbox's own reader (Claude Code's)
}

// proxyRun is how a script starts the sandbox of a proxy request's trial (srt's, Codex's).
type proxyRun interface {
	Check() error
	Open(b *strings.Builder, scenario, why, header, prelude string) error
}

// request is a crafted request as the trial recorded it (the fields a script reads), and the
// name of every field it set.
type request struct {
	Via, Host, Method, Tamper, Addr string
	Swap                            string   `json:"swap"`
	Carry                           []string `json:"carry"` // what it takes along (secrets.go)
	SwapTo                          string   `json:"swap_to"`
	Port                            int
	ATYP                            byte `json:"atyp"`
	NoAuth                          bool `json:"no_auth"`
	Pipelined                       bool
	fields                          []string
}

func (r *request) UnmarshalJSON(b []byte) error {
	type plain request
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	r.fields = slices.Sorted(maps.Keys(m))
	return nil
}

// spoken are the request fields a script sends as the trial did: a request that sets any other
// is one the script would send differently, so it gets none.
var spoken = map[string]bool{"id": true, "via": true, "host": true, "port": true, "method": true, "no_auth": true, "carry": true}

// unspoken names the fields of r a script cannot send as the trial did.
func (r request) unspoken() []string {
	var out []string
	for _, f := range r.fields {
		if !spoken[f] {
			out = append(out, f)
		}
	}
	return out
}

// find is the evidence, of a record's, that holds scenario: the record's own, or one of those
// keyed by scenario when the trial ran several sessions.
func find(rec model.Record, scenario string) (*evidence, error) {
	if len(rec.Evidence) == 0 {
		return nil, fmt.Errorf("the trial kept no evidence")
	}
	var one evidence
	if err := json.Unmarshal(rec.Evidence, &one); err == nil && len(one.Cases) > 0 {
		if one.has(scenario) {
			one.raw = rec.Evidence
			return &one, nil
		}
		return nil, fmt.Errorf("the trial's evidence has no case %s", scenario)
	}
	var many map[string]json.RawMessage
	if err := json.Unmarshal(rec.Evidence, &many); err != nil {
		return nil, fmt.Errorf("read the trial's evidence: %w", err)
	}
	for _, raw := range many {
		var e evidence
		if json.Unmarshal(raw, &e) == nil && e.has(scenario) {
			e.raw = raw
			return &e, nil
		}
	}
	return nil, fmt.Errorf("no case %s in the trial's evidence", scenario)
}

func (e *evidence) has(scenario string) bool {
	for _, c := range e.Cases {
		if c.Name == scenario {
			return true
		}
	}
	return false
}

// Script is the reproducer of a bypass case that a request shows, through the sandbox's proxy
// or to a host unix socket, as the trial rec ran it; the error says why there is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	e, err := find(rec, scenario)
	if err != nil {
		return "", err
	}
	for _, c := range e.Cases {
		if c.Name == scenario && (c.Raw.Via == "unix" || c.Raw.Via == "uring-unix") {
			return unixscript.Script(unixscript.Trial{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken,
				Argv: e.Run.Argv, Settings: e.Settings, Dir: e.Dir, Socket: c.Raw.Addr, Uring: c.Raw.Via == "uring-unix"}, scenario, why)
		}
		if c.Name == scenario && directscript.Speaks(c.Raw.Via) {
			return directscript.Script(directscript.Trial{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken, Argv: e.Run.Argv, Settings: e.Settings, Dir: e.Dir,
				Via: c.Raw.Via, Addr: c.Raw.Addr, Zone: c.Raw.Host, Roles: e.roles()}, scenario, why)
		}
		if c.Name == scenario && c.Raw.Via == "signal" {
			return signalscript.Script(signalscript.Trial{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken, Argv: e.Run.Argv, Dir: e.Dir}, scenario, why)
		}
		if c.Name == scenario && c.Raw.Via == "tiocsti" {
			return ttyscript.Script(e.Srt(), scenario, why)
		}
		if c.Name == scenario && c.Raw.Tamper == "bridge" && c.Raw.Via == "http" {
			return unixscript.Script(unixscript.Trial{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken,
				Argv: e.Run.Argv, Settings: e.Settings, Dir: e.Dir, Socket: c.Raw.SwapTo, Swap: c.Raw.Swap}, scenario, why)
		}
	}
	run, send := e.proxyRun()
	if err := run.Check(); err != nil {
		return "", err
	}
	parent, err := e.parent()
	if err != nil {
		return "", err
	}
	var control, kase *caseOf
	var carried *secrets
	for i := range e.Cases {
		c := &e.Cases[i]
		if c.Name == scenario {
			kase = &caseOf{via: c.Raw.Via, host: c.Raw.Host, port: c.Raw.Port, method: c.Raw.Method, allowedOK: c.AllowedOK, noAuth: c.Raw.NoAuth,
				throughParent: c.ThroughParent}
			switch {
			case c.Raw.Tamper != "" || c.Raw.Pipelined || c.Raw.ATYP != 0 && c.Raw.ATYP != 3:
				return "", fmt.Errorf("%s sends a request the reproducer does not speak yet (tampering, pipelining or an address type)", scenario)
			case c.Raw.Via != "http" && c.Raw.Via != "connect" && c.Raw.Via != "socks":
				return "", fmt.Errorf("%s goes %s, not through the proxy: the reproducer sends proxy requests only so far", scenario, c.Raw.Via)
			case len(c.Raw.unspoken()) > 0:
				return "", fmt.Errorf("%s sends a request the reproducer does not speak yet (%s)", scenario, strings.Join(c.Raw.unspoken(), ", "))
			}
			if !standsIn(c.Raw.Host, hostNames(e)) {
				return "", fmt.Errorf("%s goes to %q, an address or a name of the trial's own fixture, which the script's fixture does not have: its request would reach nothing there, and the script would say no bug whatever the sandbox did", scenario, c.Raw.Host)
			}
			if len(c.Raw.Carry) > 0 {
				if carried, err = e.secretsOf(c.Raw.Carry, c.MustCarry, c.MustNotCarry); err != nil {
					return "", fmt.Errorf("%s: %w", scenario, err)
				}
			}
		}
	}
	for i := range e.Cases {
		if c := &e.Cases[i]; c.Name == "" && c.Raw.Via == kase.via {
			control = &caseOf{via: c.Raw.Via, host: c.Raw.Host, port: c.Raw.Port}
			if c.Raw.Via == "socks" && c.Raw.ATYP == 1 {
				control.via = "socks-ip" // request.py's SOCKS5 CONNECT to an IPv4 address
			}
		}
	}
	if control == nil {
		control = &caseOf{via: kase.via, host: "allowed." + parts.Domain, port: 80}
	}
	controlHost := hex.EncodeToString([]byte(control.host))
	if _, err := netip.ParseAddr(control.host); err == nil {
		// The script's fixture hosts have addresses of their own: Codex's policy, which names the
		// allowed host's as it is, gets the script's in its place (codexrun.Run.Allowed).
		if e.Target != "codex" || control.host != e.Allowed.IP {
			return "", fmt.Errorf("%s: the session's control names the allowed host by the trial's address (%s), which the script's fixture does not have", scenario, control.host)
		}
		controlHost = `"$(printf %s "` + parts.AllowedAddr + `" | od -An -tx1 | tr -d ' \n')"`
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, parts.Header, parts.Prelude); err != nil {
		return "", err
	}
	if err := writeFixture(&b, e, run, send); err != nil {
		return "", fmt.Errorf("%s: %w", scenario, err)
	}
	if parent != "" {
		writeParent(&b, parent, e.Target)
	}
	if carried != nil {
		carried.plant(&b)
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("echo \"== control: the allowed host, the same way (%s)\"\n", control.via)
	w("send %s %s %d GET /repro/control auth\n", control.via, controlHost, control.port)
	w("if ! grep -q '^allowed@' \"$w/log\"; then echo 'could not tell: the allowed host was not reached either (the sandbox or the fixture did not work)'; exit 2; fi\n")
	w(": > \"$w/log\"\n")
	w("echo \"== the case: %s\"\n", parts.ShellSafe(scenario))
	w("send %s %s %d %s /repro/case %s", kase.via, hex.EncodeToString([]byte(kase.host)), kase.port, cmp.Or(kase.method, "GET"), kase.auth())
	if carried != nil {
		w(" %s", strings.Join(carried.carry, ","))
	}
	w("\n")
	// Any host but the allowed one (on its own ports, where the case may reach it) is a breach;
	// the parent proxy the settings name is none (what it forwards is logged where it arrives).
	pattern := "^[^p]"
	if kase.allowedOK {
		pattern = "^[^ap]\\|^allowed@[^8]"
	}
	w("sleep 0.2\necho '-- the fixture logged:'; cat \"$w/log\"\n")
	w("if grep -q '%s' \"$w/log\"; then echo 'BUG: the request reached a fixture host the policy forbids'; exit 1; fi\n", pattern)
	if kase.throughParent {
		w("if grep -q '^allowed@' \"$w/log\" && ! grep -q '^parent@' \"$w/log\"; then echo 'BUG: the request reached the allowed host around the parent proxy the sandbox was given'; exit 1; fi\n")
	}
	if carried != nil {
		carried.check(&b)
		return b.String(), nil
	}
	w("echo 'no bug: refused, and the allowed host was reached the same way'\nexit 0\n")
	return b.String(), nil
}

// proxyRun is how a script runs the trial's sandbox again, and its send() (Claude Code's Open
// writes its own); srt's runs the caller's PROXY in place of a proxy the trial's fault stood in.
func (e *evidence) proxyRun() (proxyRun, string) {
	switch e.Target {
	case "codex":
		return codexrun.Run{Version: e.TargetVersion, Broken: e.Broken, Argv: e.Run.Argv, Workspace: e.Dir, Allowed: e.Allowed.IP}, codexrun.Send
	case "claude-code":
		return &claudescript.ProxyRun{Raw: e.raw, Dir: e.Dir}, ""
	}
	run := e.Srt()
	run.Proxy = true
	return run, srtrun.Send
}

// writeFixture appends, after a request script's opening, the fixture hosts (serve.py), the
// request (request.py), the hosts file that resolves the trial's names to their roles'
// listeners, and send(); and, where run is srt's standing the caller's PROXY in for the trial's
// fault's proxy, the lines that start it (srtrun.Run.StartProxy).
func writeFixture(b *strings.Builder, e *evidence, run proxyRun, send string) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("cat > \"$w/serve.py\" <<'PY'\n%sPY\n", parts.ServePy)
	w("cat > \"$w/request.py\" <<'PY'\n%sPY\n", requestPy)
	w("{\n  echo '127.0.0.1 localhost'\n  echo '::1 localhost'\n")
	for _, n := range hostNames(e) {
		w("  echo \"%s %s\"\n", addrOf(n.role), n.name)
	}
	w("} > \"$w/hosts\"\n")
	b.WriteString(parts.Fixture + send)
	if srt, ok := run.(srtrun.Run); ok {
		return srt.StartProxy(b)
	}
	return nil
}

type caseOf struct {
	via, host, method string
	port              int
	allowedOK, noAuth bool
	throughParent     bool // it must reach the allowed host through the parent proxy
}

// auth is the request's credentials argument (request.py's AUTH).
func (c *caseOf) auth() string {
	if c.noAuth {
		return "noauth"
	}
	return "auth"
}

type hostName struct{ name, role string }

// hostNames are the names the fixture answers: the allowed and denied hosts and the session's
// own, each by its role.
func hostNames(e *evidence) []hostName {
	seen := map[string]bool{}
	out := []hostName{{"allowed." + parts.Domain, model.RoleAllowed}, {"denied." + parts.Domain, model.RoleDenied}}
	for _, n := range e.Names {
		if !seen[n.Name] && validName.MatchString(n.Name) {
			seen[n.Name] = true
			out = append(out, hostName{n.Name, n.Role})
		}
	}
	sort.SliceStable(out[2:], func(i, j int) bool { return out[2+i].name < out[2+j].name })
	return out
}

var validName = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)

// addrOf is where a role's host listens in the script's fixture ($b is its /24).
func addrOf(role string) string {
	switch role {
	case model.RoleAllowed:
		return "$b.2"
	case model.RoleLoopback:
		return "127.0.0.1"
	case model.RoleMetadata:
		return "169.254.169.254"
	case model.RoleSelf:
		return "$b.1"
	}
	return "$b.3" // denied, and any name the policy must refuse
}

// roles are the trial's fixture addresses by role, for a request that uses no proxy.
func (e *evidence) roles() map[netip.Addr]string {
	out := map[netip.Addr]string{}
	for ip, role := range map[string]string{e.Allowed.IP: model.RoleAllowed, e.Denied.IP: model.RoleDenied, e.Extra.DeniedV6: directscript.RoleDenied6,
		e.Extra.Loopback.IP: model.RoleLoopback, e.Extra.Metadata.IP: model.RoleMetadata, e.Extra.Self.IP: model.RoleSelf} {
		if a, err := netip.ParseAddr(ip); err == nil {
			out[a] = role
		}
	}
	return out
}
