// Package crafted is the probe's crafted requests: what the bypass scenarios send. curl refuses or
// rewrites most of what an attacker would try (a NUL or CR/LF in a host name, a 300-byte name, an
// IPv6 zone id), so the probe speaks the proxy protocols itself, byte for byte: an absolute-URI GET
// and a CONNECT line to the HTTP proxy, a SOCKS5 CONNECT with any address type and any bytes in the
// name. Every request that gets through asks for /bypass/NONCE/ID, so the fixture host that answers
// logs which case reached it; everything else (datagrams, unix socket lines, injected terminal
// input) carries "sandcheck NONCE ID" for the same reason. As everywhere in the probe, nothing is
// judged here.
package crafted

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/errno"
	"github.com/sandcheck/sandcheck/suites/probe/tamper"
)

// Ways a raw request travels.
const (
	ViaHTTP      = "http"       // GET http://HOST:PORT/... through the HTTP proxy
	ViaConnect   = "connect"    // CONNECT HOST:PORT through the HTTP proxy, then a GET in the tunnel
	ViaSOCKS     = "socks"      // SOCKS5 CONNECT (any address type), then a GET in the tunnel
	ViaDirect    = "direct"     // TCP to Addr ignoring any proxy, then a GET
	ViaUDP       = "udp"        // one datagram to Addr, then wait for an answer
	ViaICMP      = "icmp"       // an ICMP echo request to Addr (ping socket, else raw socket)
	ViaUnix      = "unix"       // connect to the unix socket Addr (@name: abstract), send a line
	ViaUringUnix = "uring-unix" // the same through io_uring: IORING_OP_SOCKET + IORING_OP_CONNECT
	ViaUringTCP  = "uring-tcp"  // TCP to Addr through io_uring, then a GET
	ViaTIOCSTI   = "tiocsti"    // push input into the controlling terminal (fd 0, then /dev/tty)
	ViaDNSUDP    = "dns-udp"    // a TXT query for DNSName(nonce, id, Host) to the resolver at Addr, over UDP
	ViaDNSTCP    = "dns-tcp"    // the same over TCP
	ViaSignal    = "signal"     // SIGKILL the process in view whose argv holds Addr (fixtures/sentinel)
)

// Tampering a request does before it is sent (Request.Tamper; package tamper).
const (
	// TamperAdmin: the control requests an allow-list proxy's admin API takes, to every
	// loopback listener the command can see, the proxy ports it was given and the usual admin
	// port (tamper.AdminPort): the policy replaced by one allowing the request's host, the mode
	// switched to full, a reload. The request itself then says whether the proxy changed.
	TamperAdmin = "admin"
	// TamperBridge: the command replaces every unix socket where its sandbox keeps the bridges
	// to its proxy (Request.Swap) by a link to a host socket (Request.SwapTo): a relay that
	// follows it carries the command's proxy traffic there, past the command's seccomp filter.
	TamperBridge = "bridge"
)

// Request is one crafted request.
type Request struct {
	ID  string `json:"id"`
	Via string `json:"via"`
	// Host is the destination as the proxy request names it, sent byte for byte (NUL, CR/LF,
	// brackets and all); Port is appended as ":PORT" when set.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// ATYP is the SOCKS5 address type: 3 domain name (default), 1 IPv4, 4 IPv6 (Host is then
	// the address's text).
	ATYP byte `json:"atyp,omitempty"`
	// Addr is the destination of the requests that use no proxy: ip:port, an IP for ICMP, a
	// socket path (or @abstract) for unix, the marker of the process to kill for signal.
	Addr string `json:"addr,omitempty"`
	// NoAuth leaves the proxy credentials of the environment out, as a process that found the
	// proxy port without them would.
	NoAuth bool `json:"no_auth,omitempty"`
	// Method is the HTTP method of the request to the destination (through the HTTP proxy, or
	// inside a tunnel), sent as it is (case and all); "" is GET. Any other sends an empty body.
	Method string `json:"method,omitempty"`
	// Pipelined (ViaHTTP) sends a GET first and the case's request after it on the same
	// connection, kept alive: a proxy that judges a connection by its first request passes the
	// second unjudged. The GET asks for the case's path plus FirstSuffix, never attributed to it.
	Pipelined bool `json:"pipelined,omitempty"`
	// FirstHost (Pipelined) is the authority of the first request when it is not the case's
	// own: an allowed host asked first, the denied one second, on one connection.
	FirstHost string `json:"first_host,omitempty"`
	// Burst (Pipelined) writes both requests at once, before either answer is read (HTTP
	// pipelining proper); otherwise the second goes after the first's answer.
	Burst bool `json:"burst,omitempty"`
	// HostHeader (ViaHTTP, ViaConnect) is the Host header when it differs from the request
	// target: a proxy that judges the one and dials the other is fooled.
	HostHeader string `json:"host_header,omitempty"`
	// Front (ViaHTTP, and the request inside a tunnel) is the Host header of a request for the
	// case's path under model.FrontPrefix, where the allowed host is a front that passes it to
	// the backend its Host names: a proxy that forwards the client's Host, not one made from its
	// target, reaches the denied host through it.
	Front string `json:"front,omitempty"`
	// TLSName (ViaConnect) is the SNI name of a TLS handshake made inside the tunnel before the
	// GET: a proxy that routes a tunnel by its ClientHello, not its CONNECT line, is fooled.
	TLSName string `json:"tls_name,omitempty"`
	// Upgrade (ViaHTTP) is the protocol the request asks to switch to, with its handshake's
	// headers (websocket): a proxy that hands an upgrade to a tunnel of its own may judge it
	// less than a request.
	Upgrade string `json:"upgrade,omitempty"`
	// HTTP10 (ViaHTTP) sends an HTTP/1.0 request without a Host header: its target is in the
	// request line only, for a proxy that judges the Host header to miss.
	HTTP10 bool `json:"http10,omitempty"`
	// Inner (ViaConnect) is the authority the request inside the tunnel names, in absolute form
	// and as its Host: a proxy that re-issues what a tunnel carries by the request's own target
	// takes it somewhere the CONNECT never asked for.
	Inner string `json:"inner,omitempty"`
	// Tamper is what the command tries on the proxy's control plane before the request
	// (TamperAdmin, TamperBridge), "" nothing.
	Tamper string `json:"tamper,omitempty"`
	// Swap and SwapTo (TamperBridge): where the sockets replaced are, the host socket linked to.
	Swap   string `json:"swap,omitempty"`
	SwapTo string `json:"swap_to,omitempty"`
	// Carry (ViaHTTP, and a request inside a tunnel) are sources whose values the request takes
	// along in headers (carry.go): the secrets a sandbox promises to withhold or mask.
	Carry []string `json:"carry,omitempty"`
}

// FirstSuffix marks the path of a pipelined case's first, harmless request.
const FirstSuffix = ".first"

// method is r's method ("" is GET).
func (r Request) method() string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// bodyHeader is what a request with a method other than GET carries: an empty body, said so.
func (r Request) bodyHeader() string {
	if r.method() == http.MethodGet {
		return ""
	}
	return "Content-Length: 0\r\n"
}

// Result is what one raw request saw.
type Result struct {
	ID         string `json:"id"`
	Via        string `json:"via"`
	Skipped    string `json:"skipped,omitempty"`
	Stage      string `json:"stage,omitempty"` // where it stopped (proxy, handshake, reply, tunnel, response, socket, connect)
	Status     int    `json:"status,omitempty"`
	ProxyError string `json:"proxy_error,omitempty"`
	Reply      int    `json:"socks_reply"` // SOCKS5 reply code; -1 when none came
	Body       string `json:"body,omitempty"`
	Err        string `json:"err,omitempty"`
	Errno      string `json:"errno,omitempty"`
	Connected  bool   `json:"connected,omitempty"` // the destination (not a proxy) accepted or answered
	ElapsedMS  int64  `json:"elapsed_ms"`
	// Tampered is what each control-plane request answered (Request.Tamper).
	Tampered []string `json:"tampered,omitempty"`
	// CarryRead is what reading each Carry source found inside: its length, or the error.
	CarryRead []string `json:"carry_read,omitempty"`
}

// bodyLimit is how much of an answer a result keeps, as the probe's channels do.
const bodyLimit = 512

// BypassPath is the path every raw request that gets through asks for.
func BypassPath(nonce, id string) string { return "/bypass/" + nonce + "/" + id }

// Path is what r asks for: its BypassPath, or the same under the front's prefix.
func (r Request) Path(nonce string) string {
	if r.Front != "" {
		return model.FrontPrefix + nonce + "/" + r.ID
	}
	return BypassPath(nonce, r.ID)
}

// Payload is what a raw request that carries no HTTP sends (datagram, unix line, terminal
// input): the fixture logs it, so it names the case.
func Payload(nonce, id string) string { return "sandcheck " + nonce + " " + id }

// spec is what every crafted request of a trial shares.
type spec struct {
	Nonce   string        // names the trial in every request the fixture logs
	Timeout time.Duration // per request
}

// Send sends one crafted request for the trial of nonce; timeout bounds each of its steps.
func Send(r Request, nonce string, timeout time.Duration) Result {
	s := spec{Nonce: nonce, Timeout: timeout}
	start := time.Now()
	res := Result{ID: r.ID, Via: r.Via, Reply: -1}
	switch r.Tamper {
	case "":
	case TamperAdmin:
		res.Tampered = tamper.Admin(r.Host, envProxyAuth(), envProxies(), s.Timeout)
	case TamperBridge:
		res.Tampered = tamper.SwapBridge(r.Swap, r.SwapTo)
	default:
		res.Skipped = "unknown tampering " + r.Tamper
		return res
	}
	switch r.Via {
	case ViaHTTP, ViaConnect:
		p := httpProxy()
		if p == nil {
			res.Skipped = "no HTTP proxy in the environment (HTTP_PROXY)"
			break
		}
		if r.Via == ViaHTTP {
			proxyGet(s, r, p, &res)
		} else {
			proxyConnect(s, r, p, &res)
		}
	case ViaSOCKS:
		p, _ := url.Parse(SOCKSProxy())
		if p == nil || p.Host == "" {
			res.Skipped = "no SOCKS proxy in the environment (ALL_PROXY/FTP_PROXY)"
			break
		}
		socksConnect(s, r, p, &res)
	case ViaDirect:
		if c := dialDestination(s, "tcp", r.Addr, &res); c != nil {
			tunnelGet(s, r, c, &res)
		}
	case ViaUDP:
		udpSend(s, r, &res)
	case ViaICMP:
		icmpEcho(s, r, &res)
	case ViaUnix:
		if c := dialDestination(s, "unix", r.Addr, &res); c != nil {
			lineExchange(s, r, c, &res)
		}
	case ViaUringUnix, ViaUringTCP:
		uringRequest(s, r, &res)
	case ViaTIOCSTI:
		tiocsti(s, r, &res)
	case ViaDNSUDP, ViaDNSTCP:
		dnsQuery(s, r, &res)
	case ViaSignal:
		signalMarked(r, &res)
	default:
		res.Skipped = "unknown raw request " + r.Via
	}
	res.ElapsedMS = time.Since(start).Milliseconds()
	return res
}

// dialDestination connects to the destination itself, around any proxy: its accepting is what
// Connected records.
func dialDestination(s spec, network, addr string, res *Result) net.Conn {
	c, err := net.DialTimeout(network, addr, s.Timeout)
	if err != nil {
		fail(res, "connect", err)
		return nil
	}
	res.Connected = true
	return c
}

func fail(res *Result, stage string, err error) {
	res.Stage, res.Err, res.Errno = stage, err.Error(), errno.Name(err)
}

// httpProxy is the HTTP proxy the environment names, credentials included.
func httpProxy() *url.URL {
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		if v := os.Getenv(k); v != "" {
			if u, err := url.Parse(v); err == nil && u.Host != "" {
				return u
			}
		}
	}
	return nil
}

// SOCKSProxy returns the SOCKS proxy the environment names, if any. ALL_PROXY may be HTTP (srt
// sets it so); srt's SOCKS endpoint is the socks5h URL in FTP_PROXY.
func SOCKSProxy() string {
	for _, k := range []string{"ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy"} {
		if v := os.Getenv(k); strings.HasPrefix(v, "socks") {
			return v
		}
	}
	return ""
}

// envProxies are the host:port of the proxies the environment names.
func envProxies() []string {
	var out []string
	if p := httpProxy(); p != nil {
		out = append(out, p.Host)
	}
	if u, err := url.Parse(SOCKSProxy()); err == nil && u.Host != "" {
		out = append(out, u.Host)
	}
	return out
}

// envProxyAuth is the Proxy-Authorization header line of the environment's HTTP proxy.
func envProxyAuth() string {
	if p := httpProxy(); p != nil {
		return proxyAuth(p, Request{})
	}
	return ""
}

// authority is HOST[:PORT] as the request sends it.
func (r Request) authority() string {
	if r.Port == 0 {
		return r.Host
	}
	return r.Host + ":" + strconv.Itoa(r.Port)
}

// proxyAuth is the Proxy-Authorization header line for p's credentials ("" without).
func proxyAuth(p *url.URL, r Request) string {
	if r.NoAuth || p.User == nil {
		return ""
	}
	pass, _ := p.User.Password()
	return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pass)) + "\r\n"
}

// dialProxy connects to the proxy. A refused connection is tried again once, half a second
// later: a relay that is still starting (srt's start-up race, which the network scenario
// measures) is not what a bypass case asks about. A second refusal stands, reported.
func dialProxy(s spec, p *url.URL, res *Result) net.Conn {
	c, err := net.DialTimeout("tcp", p.Host, s.Timeout)
	if err != nil && errno.Name(err) == "ECONNREFUSED" {
		time.Sleep(500 * time.Millisecond)
		c, err = net.DialTimeout("tcp", p.Host, s.Timeout)
	}
	if err != nil {
		fail(res, "proxy", err)
		return nil
	}
	c.SetDeadline(time.Now().Add(s.Timeout))
	return c
}

// proxyGet sends an absolute-URI GET to the HTTP proxy (behind a first one, when Pipelined).
func proxyGet(s spec, r Request, p *url.URL, res *Result) {
	c := dialProxy(s, p, res)
	if c == nil {
		return
	}
	defer c.Close()
	a := r.authority()
	br := bufio.NewReader(c)
	version, host, conn := "HTTP/1.1", "Host: "+cmp.Or(r.Front, r.HostHeader, a)+"\r\n", "Connection: close\r\n"
	if r.HTTP10 {
		version, host = "HTTP/1.0", ""
	}
	if r.Upgrade != "" {
		conn = upgradeHeaders(r.Upgrade)
	}
	second := fmt.Sprintf("%s http://%s%s %s\r\n%s%s%s%s%s\r\n",
		r.method(), a, r.Path(s.Nonce), version, host, r.bodyHeader(), r.carryHeaders(res), proxyAuth(p, r), conn)
	if !r.Pipelined {
		io.WriteString(c, second)
		readResponse(br, nil, res)
		return
	}
	fa := cmp.Or(r.FirstHost, a)
	first := fmt.Sprintf("GET http://%s%s HTTP/1.1\r\nHost: %s\r\n%sConnection: keep-alive\r\n\r\n", fa, BypassPath(s.Nonce, r.ID)+FirstSuffix, fa, proxyAuth(p, r))
	if r.Burst {
		first += second
	}
	io.WriteString(c, first)
	answer := &Result{}
	readResponse(br, nil, answer)
	if answer.Status == 0 {
		res.Stage, res.Err, res.Errno = "first", answer.Err, answer.Errno
		return
	}
	if !r.Burst {
		if _, err := io.WriteString(c, second); err != nil {
			fail(res, "second", err)
			return
		}
	}
	readResponse(br, nil, res)
}

// upgradeHeaders ask to switch the connection to protocol; for websocket with the handshake's
// own headers (RFC 6455), so a proxy that knows WebSocket takes it for one.
func upgradeHeaders(protocol string) string {
	h := "Connection: Upgrade\r\nUpgrade: " + protocol + "\r\n"
	if strings.EqualFold(protocol, "websocket") {
		h += "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2FuZGNoZWNrLXdzLWtleQ==\r\n"
	}
	return h
}

// proxyConnect opens a CONNECT tunnel and asks for the case's path through it.
func proxyConnect(s spec, r Request, p *url.URL, res *Result) {
	c := dialProxy(s, p, res)
	if c == nil {
		return
	}
	defer c.Close()
	a := r.authority()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", a, cmp.Or(r.HostHeader, a), proxyAuth(p, r))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		fail(res, "reply", err)
		return
	}
	res.Status, res.ProxyError = resp.StatusCode, resp.Header.Get("X-Proxy-Error")
	if resp.StatusCode != http.StatusOK {
		res.Stage = "reply"
		res.Body = readBody(resp.Body)
		resp.Body.Close()
		return
	}
	if r.TLSName != "" {
		tlsGet(s, r, bufferedConn{c, br}, res)
		return
	}
	tunnelGetBuffered(s, r, c, br, res)
}

// bufferedConn reads what its reader buffered before the connection's next bytes.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// tlsGet asks for the case's path over TLS inside an open tunnel, the handshake naming
// r.TLSName. The peer's certificate is not checked: where the tunnel leads is what the case
// asks, and the fixture host that answers logs it either way.
func tlsGet(s spec, r Request, c net.Conn, res *Result) {
	tc := tls.Client(c, &tls.Config{ServerName: r.TLSName, InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(s.Timeout))
	if err := tc.Handshake(); err != nil {
		fail(res, "tls", err)
		return
	}
	tunnelGetBuffered(s, r, tc, bufio.NewReader(tc), res)
}

// tunnelGet asks for the case's path over an open connection (a tunnel, or a direct one).
func tunnelGet(s spec, r Request, c net.Conn, res *Result) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(s.Timeout))
	tunnelGetBuffered(s, r, c, bufio.NewReader(c), res)
}

func tunnelGetBuffered(s spec, r Request, c net.Conn, br *bufio.Reader, res *Result) {
	c.SetDeadline(time.Now().Add(s.Timeout))
	// Over TLS the Host is the name the handshake asked for, as a client's would be: a proxy
	// that intercepts the tunnel refuses a request whose Host is not its target's.
	host, target := cmp.Or(r.Front, r.TLSName, "sandcheck"), r.Path(s.Nonce)
	if r.Inner != "" {
		host, target = r.Inner, "http://"+r.Inner+target
	}
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%sConnection: close\r\n\r\n", r.method(), target, host, r.bodyHeader(), r.carryHeaders(res)); err != nil {
		fail(res, "tunnel", err)
		return
	}
	inner := &Result{}
	readResponse(br, nil, inner)
	res.Body, res.Err, res.Errno = inner.Body, inner.Err, inner.Errno
	if inner.Status != 0 {
		res.Connected = true
		res.Status, res.Stage = inner.Status, "response"
	} else if inner.Err != "" {
		res.Stage = "tunnel"
	}
}

func readResponse(br *bufio.Reader, req *http.Request, res *Result) {
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		fail(res, "response", err)
		return
	}
	defer resp.Body.Close()
	res.Status, res.ProxyError = resp.StatusCode, resp.Header.Get("X-Proxy-Error")
	res.Body = readBody(resp.Body)
}

func readBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, bodyLimit))
	return string(b)
}

// lineExchange sends the case's payload as one line and reads the answer.
func lineExchange(s spec, r Request, c net.Conn, res *Result) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(s.Timeout))
	if _, err := fmt.Fprintf(c, "%s\n", Payload(s.Nonce, r.ID)); err != nil {
		fail(res, "send", err)
		return
	}
	b, err := io.ReadAll(io.LimitReader(c, bodyLimit))
	res.Body = string(b)
	if err != nil && !errors.Is(err, io.EOF) {
		fail(res, "reply", err)
	}
}

// udpSend sends the payload as one datagram and waits for an answer.
func udpSend(s spec, r Request, res *Result) {
	c, err := net.DialTimeout("udp", r.Addr, s.Timeout)
	if err != nil {
		fail(res, "socket", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(s.Timeout))
	if _, err := c.Write([]byte(Payload(s.Nonce, r.ID))); err != nil {
		fail(res, "send", err)
		return
	}
	b := make([]byte, bodyLimit)
	n, err := c.Read(b)
	if err != nil {
		fail(res, "reply", err)
		return
	}
	res.Connected, res.Body = true, string(b[:n])
}
