package requestscript

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// parent is the parent proxy the trial's sandbox sent what it allows through, as ADDR:PORT on the
// host's loopback, where the script can stand one up; "" for none. srt's settings name it
// (network.parentProxy); Claude Code and Codex, whose settings have no key for one, were given it
// as the caller's proxy variables, which the script gives them too (writeParent).
func (e *evidence) parent() (string, error) {
	p, err := parentOf(e.Settings)
	if p != "" || err != nil || e.Policy.ParentProxy == "" {
		return p, err
	}
	if callerProxyVars(e.Target) == nil {
		return "", fmt.Errorf("the trial gave %s a parent proxy (%s) the reproducer cannot give it: not in its settings", e.Target, e.Policy.ParentProxy)
	}
	return loopbackProxy(e.Policy.ParentProxy)
}

// callerProxyVars are the variables a target's adapter gives it a parent proxy in (the caller's
// proxy variables): none for a target whose settings name it.
func callerProxyVars(target string) []string {
	switch target {
	case "claude-code":
		return []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}
	case "codex":
		return model.CallerProxyVars
	}
	return nil
}

// parentOf is the parent proxy srt's settings name (network.parentProxy), "" for none.
func parentOf(settings json.RawMessage) (string, error) {
	var s struct {
		Network struct {
			ParentProxy struct {
				HTTP, HTTPS string
			} `json:"parentProxy"`
		} `json:"network"`
	}
	if len(settings) == 0 || json.Unmarshal(settings, &s) != nil {
		return "", nil
	}
	p := s.Network.ParentProxy
	raw := p.HTTP
	if raw == "" {
		raw = p.HTTPS
	}
	if raw == "" {
		return "", nil
	}
	if p.HTTPS != "" && p.HTTPS != raw {
		return "", fmt.Errorf("the settings name two parent proxies (%s, %s): the reproducer stands up one", p.HTTP, p.HTTPS)
	}
	return loopbackProxy(raw)
}

// loopbackProxy is a proxy URL's ADDR:PORT, which must be on the host's loopback.
func loopbackProxy(raw string) (string, error) {
	if u, err := url.Parse(raw); err == nil {
		if ap, err := netip.ParseAddrPort(u.Host); err == nil && ap.Addr().IsLoopback() {
			return ap.String(), nil
		}
	}
	return "", fmt.Errorf("the parent proxy (%s) is not one address on the host's loopback: the reproducer stands up only such a parent", strings.TrimSpace(raw))
}

// writeParent starts the parent proxy (parent.py) in the sandbox's host namespace at addr, with
// the fixture's hosts file, and waits for it; for a target given it as the caller's proxy
// variables, it sets them (for Claude Code with loopback kept off them: its model is there).
func writeParent(b *strings.Builder, addr, target string) {
	fmt.Fprintf(b, "cat > \"$w/parent.py\" <<'PY'\n%sPY\n", parts.ParentPy)
	fmt.Fprintf(b, `echo "== a parent proxy at %[1]s, as the settings name (it enforces nothing and logs what it is asked for)"
ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && exec python3 "$1/parent.py" "$1/log" %[1]s' sh "$w" &
echo $! >> "$w/pids"
i=0
until grep -q '^ready' "$w/log"; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "the parent proxy did not start" >&2; exit 2; }
  sleep 0.1
done
: > "$w/log"
`, addr)
	vars := callerProxyVars(target)
	if vars == nil {
		return
	}
	var env []string
	for _, k := range vars {
		env = append(env, k+"=http://"+addr)
	}
	if target == "claude-code" {
		env = append(env, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	}
	fmt.Fprintf(b, "caller_env='%s'\n", strings.Join(env, " "))
	b.WriteString("echo \"   the caller's environment: $caller_env\"\n")
}
