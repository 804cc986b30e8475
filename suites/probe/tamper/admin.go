// Package tamper is what a crafted request tries on its sandbox's proxy before it is sent:
// the control requests of an allow-list proxy's admin API (Admin), and links in place of the
// sockets that bridge the sandbox to its proxy (SwapBridge). It records what each attempt
// answered and judges nothing: the request that follows, and the fixture's log, decide.
package tamper

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AdminPort is where an allow-list proxy's admin API listens by default (the standalone build of
// Codex's network proxy documents 127.0.0.1:8080; the one embedded in Codex 0.171 opens none).
const AdminPort = 8080

// maxAdminEndpoints bounds the listeners tried: each costs a few round trips.
const maxAdminEndpoints = 16

// Admin tries, on every candidate endpoint (the proxies given, the usual admin port, and every
// loopback listener in view), the control requests that would let host through: the policy
// replaced by one allowing it, the mode switched to full, a reload. auth is the
// Proxy-Authorization header line to send ("" none). It returns each answer, "ADDR METHOD
// PATH: STATUS" or the error; whether it worked is for the fixture's log of the request that
// follows.
func Admin(host, auth string, proxies []string, timeout time.Duration) []string {
	policy, _ := json.Marshal(map[string]any{"allowed_domains": []string{host, "*"}, "denied_domains": []string{}, "mode": "full"})
	calls := []struct{ method, path, body string }{
		{http.MethodPut, "/config", string(policy)},
		{http.MethodPost, "/config", string(policy)},
		{http.MethodPost, "/mode", `{"mode":"full"}`},
		{http.MethodPost, "/reload", ""},
	}
	timeout = min(timeout, 2*time.Second)
	var out []string
	for _, addr := range adminEndpoints(proxies) {
		for _, c := range calls {
			out = append(out, fmt.Sprintf("%s %s %s: %s", addr, c.method, c.path, controlCall(addr, c.method, c.path, c.body, auth, timeout)))
		}
	}
	return out
}

// controlCall sends one origin-form request (a control plane's, not a proxy request) and says
// what came back.
func controlCall(addr, method, path, body, auth string, timeout time.Duration) string {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		method, path, addr, auth, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "no answer: " + err.Error()
	}
	resp.Body.Close()
	return resp.Status
}

// adminEndpoints are the candidates: the proxies given (host:port), the usual admin port, and
// every TCP listener the command can reach on its own loopback (bound to a loopback address or
// to every address) in its network namespace.
func adminEndpoints(proxies []string) []string {
	var out []string
	add := func(a string) {
		if a != "" && !slices.Contains(out, a) && len(out) < maxAdminEndpoints {
			out = append(out, a)
		}
	}
	for _, p := range proxies {
		add(p)
	}
	add(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), AdminPort).String())
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, ap := range localListeners(b) {
			add(ap.String())
		}
	}
	return out
}

// localListeners reads a /proc/net/tcp{,6} table: the sockets in LISTEN (state 0A) that answer
// on loopback, a wildcard bind given as the loopback address of its family (srt's relays
// listen on [::]).
func localListeners(table []byte) []netip.AddrPort {
	var out []netip.AddrPort
	for _, line := range bytes.Split(table, []byte("\n"))[1:] {
		f := strings.Fields(string(line))
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		ap, ok := procAddr(f[1])
		switch a := ap.Addr(); {
		case !ok:
		case a.Unmap().IsLoopback():
			out = append(out, ap)
		case a.IsUnspecified() && a.Is4():
			out = append(out, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ap.Port()))
		case a.IsUnspecified():
			out = append(out, netip.AddrPortFrom(netip.IPv6Loopback(), ap.Port()))
		}
	}
	return out
}

// procAddr parses "HEXADDR:HEXPORT" as /proc/net/tcp writes it: the address in the kernel's
// byte order, 32-bit word by word.
func procAddr(s string) (netip.AddrPort, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(a)
	port, perr := strconv.ParseUint(p, 16, 16)
	if err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(port)), true
}
