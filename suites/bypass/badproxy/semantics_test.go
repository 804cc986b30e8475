package badproxy_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/nethost/dnsserver"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/bypass/badproxy"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// upstreams are an allowed and a denied host, each with a plain and a TLS server, behind
// made-up addresses the proxy resolves and dials through Options.Lookup and Dial. Each logs the
// paths it served.
type upstreams struct {
	mu   sync.Mutex
	seen map[string][]string // host -> paths
	addr map[string]string   // made-up ip:port -> real listener
}

func startUpstreams(t *testing.T) *upstreams {
	u := &upstreams{seen: map[string][]string{}, addr: map[string]string{}}
	for host, ip := range map[string]string{"allowed.x": "198.18.0.2", "denied.x": "198.18.0.3"} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u.mu.Lock()
			backend := host
			if name, _, _ := strings.Cut(r.Host, ":"); strings.HasPrefix(r.URL.Path, model.FrontPrefix) && name == "denied.x" {
				backend = name // the allowed host fronts for the denied one, as the fixture's does
			}
			u.seen[backend] = append(u.seen[backend], r.URL.Path)
			u.mu.Unlock()
			w.Write([]byte("token-" + host))
		})
		plain, tlsSrv := httptest.NewServer(h), httptest.NewTLSServer(h)
		t.Cleanup(plain.Close)
		t.Cleanup(tlsSrv.Close)
		u.addr[ip+":80"] = plain.Listener.Addr().String()
		u.addr[ip+":443"] = tlsSrv.Listener.Addr().String()
	}
	return u
}

func (u *upstreams) options(bugs map[string]bool) badproxy.Options {
	return badproxy.Options{
		Bugs: bugs,
		Lookup: func(name string) (netip.Addr, bool) {
			a, ok := map[string]netip.Addr{"allowed.x": netip.MustParseAddr("198.18.0.2"), "denied.x": netip.MustParseAddr("198.18.0.3")}[name]
			return a, ok
		},
		Dial: func(network, addr string, timeout time.Duration) (net.Conn, error) {
			real, ok := u.addr[addr]
			if !ok {
				return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError("no upstream at " + addr)}
			}
			return net.DialTimeout(network, real, timeout)
		},
	}
}

func (u *upstreams) reached(host, path string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, p := range u.seen[host] {
		if p == path {
			return true
		}
	}
	return false
}

// TestSemanticsBugsLetOnlyTheirCasesThrough: each proxy-semantics request reaches the denied
// host through the proxy with its bug switched on, and never without it; the allowed request
// sent first on a kept-alive connection gets through either way.
func TestSemanticsBugsLetOnlyTheirCasesThrough(t *testing.T) {
	cases := []struct {
		bug string
		req crafted.Request
	}{
		{badproxy.BugKeepAlive, crafted.Request{ID: "keepalive", Via: crafted.ViaHTTP, Host: "denied.x", Port: 80, Pipelined: true, FirstHost: "allowed.x:80"}},
		{badproxy.BugKeepAlive, crafted.Request{ID: "pipelined", Via: crafted.ViaHTTP, Host: "denied.x", Port: 80, Pipelined: true, Burst: true, FirstHost: "allowed.x:80"}},
		{badproxy.BugHostHeader, crafted.Request{ID: "host-header", Via: crafted.ViaHTTP, Host: "denied.x", Port: 80, HostHeader: "allowed.x:80"}},
		{badproxy.BugHostHeader, crafted.Request{ID: "connect-host-header", Via: crafted.ViaConnect, Host: "denied.x", Port: 80, HostHeader: "allowed.x:80"}},
		{badproxy.BugSNI, crafted.Request{ID: "sni", Via: crafted.ViaConnect, Host: "allowed.x", Port: 443, TLSName: "denied.x"}},
		{badproxy.BugUpgrade, crafted.Request{ID: "upgrade", Via: crafted.ViaHTTP, Host: "denied.x", Port: 80, Upgrade: "websocket"}},
		{badproxy.BugHostless, crafted.Request{ID: "http10-no-host", Via: crafted.ViaHTTP, Host: "denied.x", Port: 80, HTTP10: true}},
		{badproxy.BugTunnelReroute, crafted.Request{ID: "tunnel-absolute", Via: crafted.ViaConnect, Host: "allowed.x", Port: 80, Inner: "denied.x:80"}},
		{badproxy.BugHostForwarded, crafted.Request{ID: "front", Via: crafted.ViaHTTP, Host: "allowed.x", Port: 80, Front: "denied.x:80"}},
	}
	for _, c := range cases {
		for _, bugged := range []bool{false, true} {
			u := startUpstreams(t)
			p, err := badproxy.Start(u.options(map[string]bool{c.bug: bugged}))
			if err != nil {
				t.Fatal(err)
			}
			p.SetPolicy([]string{"allowed.x"}, nil)
			t.Setenv("HTTP_PROXY", "http://127.0.0.1:"+strconv.Itoa(p.HTTPPort))
			res := crafted.Send(c.req, "n1", 3*time.Second)
			p.Close()
			path := c.req.Path("n1")
			if got := u.reached("denied.x", path); got != bugged {
				t.Errorf("%s, bug %s %v: denied host reached %v (result %+v)", c.req.ID, c.bug, bugged, got, res)
			}
			if c.req.Pipelined && !u.reached("allowed.x", path+crafted.FirstSuffix) {
				t.Errorf("%s, bug %s %v: the first request did not reach the allowed host (result %+v)", c.req.ID, c.bug, bugged, res)
			}
			if !bugged && strings.Contains(res.Body, "token-denied.x") {
				t.Errorf("%s: the denied host's token came back without the bug: %+v", c.req.ID, res)
			}
		}
	}
}

// TestResolveFirstQueriesRefusedNames: under BugResolveFirst a name the policy refuses is
// asked of the host's resolver before the refusal, and never without the bug.
func TestResolveFirstQueriesRefusedNames(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	asked := make(chan string, 8)
	go dnsserver.Server{Resolve: func(name, _ string, _ net.Addr) netip.Addr { asked <- name; return netip.Addr{} }}.Serve(pc)
	for _, bugged := range []bool{false, true} {
		u := startUpstreams(t)
		opt := u.options(map[string]bool{badproxy.BugResolveFirst: bugged})
		opt.Resolver = netip.MustParseAddrPort(pc.LocalAddr().String())
		opt.Dial = net.DialTimeout
		p, err := badproxy.Start(opt)
		if err != nil {
			t.Fatal(err)
		}
		p.SetPolicy([]string{"allowed.x"}, nil)
		t.Setenv("HTTP_PROXY", "http://127.0.0.1:"+strconv.Itoa(p.HTTPPort))
		res := crafted.Send(crafted.Request{ID: "proxy-name", Via: crafted.ViaConnect, Host: "exfil.denied.x", Port: 80}, "n1", 3*time.Second)
		p.Close()
		if res.Status != http.StatusForbidden {
			t.Errorf("bug %v: CONNECT to a refused name answered %+v, want 403", bugged, res)
		}
		var got []string
		for len(asked) > 0 {
			got = append(got, <-asked)
		}
		if queried := len(got) > 0; queried != bugged {
			t.Errorf("bug %v: the resolver was asked %v", bugged, got)
		}
	}
}
