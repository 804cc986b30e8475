package requestscript

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// A condition's reproducer: the untrusted family's configurations a user ends up with, set again
// around the request a trial's network scenario starts with, the allowed host through the
// sandbox's own proxy. The condition is the script's own doing, as it was the trial's: a caller's
// proxy that is dead (untrusted/proxy-env-dead), and proxy ports whose owner is not a proxy
// (failclosed/proxy-port-taken).

// findSession is the evidence of the session that ran scenario (parts.SessionEvidence).
func findSession(rec model.Record, scenario string) (*evidence, error) {
	raw, err := parts.SessionEvidence(rec, scenario)
	if err != nil {
		return nil, err
	}
	var e evidence
	if err := json.Unmarshal(raw, &e); err != nil || e.Target == "" {
		return nil, fmt.Errorf("no session of %s in the trial's evidence", scenario)
	}
	e.raw = raw
	return &e, nil
}

// callerProxy is the caller's environment of untrusted/proxy-env-dead, as the script gives it to
// the sandbox: the dead proxy in every variable, and, for Claude Code, loopback kept off it so
// that Claude Code reaches its model there (as sandcheck's adapter does).
func callerProxy(target string) string {
	var vars []string
	for _, k := range model.CallerProxyVars {
		vars = append(vars, k+"="+model.DeadCallerProxy)
	}
	if target == "claude-code" {
		vars = append(vars, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	}
	return strings.Join(vars, " ")
}

// EnvDead is the reproducer of untrusted/proxy-env-dead: the sandbox gives the command a
// proxy of its own, and the caller's environment already names one that nothing listens on. It
// asks for the allowed host through the sandbox's proxy with the caller's environment clean (the
// control), then with the dead proxy in it. The bug: the sandbox runs the command and its proxy
// fails the allowed host, because it took the caller's proxy as its upstream. A sandbox that
// refuses to run the command (loudly) or reaches the allowed host passes.
func EnvDead(rec model.Record, scenario, why string) (string, error) {
	e, err := findSession(rec, scenario)
	if err != nil {
		return "", err
	}
	run, send := e.proxyRun()
	return conditionScript(e, run, send, scenario, why, "", "the allowed host through the sandbox's proxy, the caller's environment clean",
		func(w func(string, ...any), allowed string) {
			w("echo \"== the case: the caller's environment names a proxy that nothing listens on, %s\"\n", model.DeadCallerProxy)
			w("caller_env='%s'\n", callerProxy(e.Target))
			w("echo \"   $caller_env\"\n")
			w("send http %s 80 GET /repro/case auth > \"$w/case.out\" 2>&1\ncaller_env=\ncat \"$w/case.out\"\n", allowed)
			w("sleep 0.2\necho '-- the fixture logged:'; cat \"$w/log\"\n")
			w("if grep -q '^allowed@' \"$w/log\"; then echo 'no bug: the allowed host was reached with the dead proxy in the caller'\\''s environment'; exit 0; fi\n")
			w("if ! grep -q '^request.py: ' \"$w/case.out\"; then echo 'no bug: the sandbox did not run the command (it refused, above)'; exit 0; fi\n")
			w("echo \"BUG: the sandbox ran the command, and its proxy failed the allowed host that it reached with the caller's environment clean: the caller's dead proxy became its upstream\"\nexit 1\n")
		})
}

// conditionScript writes a condition's script: the opening and the fixture, then the control,
// the allowed host through the sandbox's proxy after the lines prep (titled what), then the case
// that kase writes (allowed: the allowed host's name as send takes it, in hex).
func conditionScript(e *evidence, run proxyRun, send, scenario, why, prep, what string, kase func(w func(string, ...any), allowed string)) (string, error) {
	if err := run.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, parts.Header, parts.Prelude); err != nil {
		return "", err
	}
	if err := writeFixture(&b, e, run, send); err != nil {
		return "", fmt.Errorf("%s: %w", scenario, err)
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	allowed := hex.EncodeToString([]byte("allowed." + parts.Domain))
	w("echo \"== control: %s\"\n%ssend http %s 80 GET /repro/control auth\n", what, prep, allowed)
	w("if ! grep -q '^allowed@' \"$w/log\"; then echo 'could not tell: the allowed host was not reached even so (the sandbox or the fixture did not work)'; exit 2; fi\n")
	w(": > \"$w/log\"\n")
	kase(w, allowed)
	return b.String(), nil
}

// portTakenRun is how failclosed/proxy-port-taken's script runs the trial's sandbox: the
// scenario's own fault is the condition, which the script makes itself (a listener that is not a
// proxy, and the settings' proxy ports pointed at it). A fault of the run's is not.
func (e *evidence) portTakenRun() (proxyRun, string, error) {
	if err := e.Broken.Check(); err != nil {
		return nil, "", err
	}
	if len(e.Faults) != 1 || e.Faults[0] != "proxy-port-taken" {
		return nil, "", fmt.Errorf("the session did not run with its proxy ports taken, but under %q", e.Faults)
	}
	switch e.Target {
	case "srt":
		run := e.Srt()
		run.Broken, run.OwnsPorts = parts.Broken{}, true // the condition is the scenario's own, which the script makes
		return run, srtrun.Send, nil
	case "claude-code":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.raw, &m); err != nil {
			return nil, "", fmt.Errorf("read the session's evidence: %w", err)
		}
		delete(m, "faults")
		raw, _ := json.Marshal(m)
		return &claudescript.ProxyRun{Raw: raw, Dir: e.Dir}, "", nil
	}
	return nil, "", fmt.Errorf("%s takes no proxy ports in its settings", e.Target)
}

// portsPy sets the proxy ports of every settings file the script wrote (JSON files under $w that
// name one, kept as FILE.ports the first time), wherever in the file they are: `ports.py DIR
// PORT` sets them, `ports.py DIR -` removes them.
const portsPy = `import json, pathlib, sys
def walk(v):
    if isinstance(v, dict):
        for k in ("httpProxyPort", "socksProxyPort"):
            if k in v:
                if sys.argv[2] == "-":
                    del v[k]
                else:
                    v[k] = int(sys.argv[2])
        for x in v.values():
            walk(x)
for p in pathlib.Path(sys.argv[1]).rglob("*.json"):
    kept = p.with_name(p.name + ".ports")
    if not kept.exists():
        if "ProxyPort" not in p.read_text():
            continue
        kept.write_text(p.read_text())
    v = json.loads(kept.read_text())
    walk(v)
    p.write_text(json.dumps(v, indent=2))
    print("   " + str(p.relative_to(sys.argv[1])) + ": " + json.dumps(v)[:300])
`

// takerPy is the program that is not a proxy: it listens on loopback, writes its port to the file
// argv[1] names, and closes each connection as soon as it accepts it.
const takerPy = `import socket, sys
ln = socket.socket()
ln.bind(("127.0.0.1", 0))
ln.listen(16)
open(sys.argv[1], "w").write(str(ln.getsockname()[1]))
while True:
    ln.accept()[0].close()
`

// PortTaken is the reproducer of failclosed/proxy-port-taken: the settings name proxy
// ports (httpProxyPort, socksProxyPort: a proxy of the user's own) whose owner is a program that
// accepts and closes, not a proxy. A sandbox that fails closed refuses to run the command, or
// says so; the bug is running it, every request failing with an empty reply. The control is the
// same settings without the ports: the allowed host through the sandbox's own proxy.
func PortTaken(rec model.Record, scenario, why string) (string, error) {
	e, err := findSession(rec, scenario)
	if err != nil {
		return "", err
	}
	run, send, err := e.portTakenRun()
	if err != nil {
		return "", err
	}
	prep := fmt.Sprintf("cat > \"$w/ports.py\" <<'PY'\n%sPY\ncat > \"$w/taker.py\" <<'PY'\n%sPY\npython3 \"$w/ports.py\" \"$w\" -\n", portsPy, takerPy)
	return conditionScript(e, run, send, scenario, why, prep, "the settings without their proxy ports: the allowed host through the sandbox's own proxy",
		func(w func(string, ...any), allowed string) {
			w("ip netns exec \"$hs\" python3 \"$w/taker.py\" \"$w/taker.port\" &\necho $! >> \"$w/pids\"\n")
			w("i=0\nuntil [ -s \"$w/taker.port\" ]; do i=$((i + 1)); [ $i -lt 100 ] || { echo 'the listener did not start'; exit 2; }; sleep 0.1; done\n")
			w("port=$(cat \"$w/taker.port\")\n")
			w("echo \"== the case: the proxy ports are $port, whose owner accepts each connection and closes it: not a proxy\"\n")
			w("python3 \"$w/ports.py\" \"$w\" \"$port\"\n")
			w("send http %s 80 GET /repro/case auth > \"$w/case.out\" 2>&1\ncat \"$w/case.out\"\n", allowed)
			w("sleep 0.2\necho '-- the fixture logged:'; cat \"$w/log\"\n")
			w("if ! grep -q '^request.py: ' \"$w/case.out\"; then echo 'no bug: the sandbox did not run the command (it refused, above)'; exit 0; fi\n")
			w("if grep -q '^allowed@' \"$w/log\"; then echo 'could not tell: the allowed host was reached through a port that is not a proxy'; exit 2; fi\n")
			w("echo \"BUG: the sandbox ran the command with its proxy ports on a program that is not a proxy, without checking it: requests through it fail\"\nexit 1\n")
		})
}
