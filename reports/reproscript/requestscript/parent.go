package requestscript

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// parentOf is the parent proxy srt's settings send what srt allows through (network.parentProxy),
// as ADDR:PORT on the host's loopback, where the script can stand one up; "" for none.
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
	u, err := url.Parse(raw)
	if err == nil && (p.HTTPS == "" || p.HTTPS == raw) {
		if ap, perr := netip.ParseAddrPort(u.Host); perr == nil && ap.Addr().IsLoopback() {
			return ap.String(), nil
		}
	}
	return "", fmt.Errorf("the settings' parent proxy (%s) is not one address on the host's loopback: the reproducer stands up only such a parent", strings.TrimSpace(raw))
}

// writeParent starts the parent proxy (parent.py) in the sandbox's host namespace at addr, with
// the fixture's hosts file, and waits for it.
func writeParent(b *strings.Builder, addr string) {
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
}
