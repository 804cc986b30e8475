// Package probe is what runs inside the sandbox. It prints a SANDBOX-RAN marker, tries the
// allowed and the denied fixture host over every channel a program could use, and prints what it
// saw as one JSON observation between markers. It judges nothing: tokens are checked outside, by
// classify, so nothing inside the sandbox can fake a pass. The crafted requests of the bypass
// scenarios are package crafted's; the errno names every report carries, package errno's.
package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/seccomp"
	"github.com/sandcheck/sandcheck/fixtures/sentinel"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/suites/probe/limits"
)

// Host is a fixture host as the probe addresses it.
type Host struct {
	Role string `json:"role"`
	Addr string `json:"addr"` // name or IP literal used in URLs
	IP   string `json:"ip"`   // used by the direct channel
}

// Spec tells the probe what to try. It is written to a file the sandbox can read.
type Spec struct {
	Nonce    string        `json:"nonce"`
	Hosts    []Host        `json:"hosts"` // allowed first, then denied
	Channels []string      `json:"channels"`
	CAFile   string        `json:"ca_file,omitempty"`
	Resolver string        `json:"resolver,omitempty"` // ip:port of the fixture DNS server
	Timeout  time.Duration `json:"timeout"`            // per request
	Curl     string        `json:"curl,omitempty"`     // curl binary; default "curl"
	// MarkDir receives a file per finished request (step-N). When SyncAfterFirst is set the probe
	// waits for step-1.ack before its second request: faults that must act exactly between two
	// requests (a proxy that comes up late, a bridge that dies) use this to be deterministic.
	MarkDir        string `json:"mark_dir,omitempty"`
	SyncAfterFirst bool   `json:"sync_after_first,omitempty"`
	// FS are filesystem checks, run after the network channels.
	FS []FSCheck `json:"fs,omitempty"`
	// Raw are crafted requests (package crafted), all at once alongside the channels.
	Raw []crafted.Request `json:"raw,omitempty"`
	// Limits are the resource measurements (package limits), last.
	Limits *limits.Spec `json:"limits,omitempty"`
}

// Attempt is one request over one channel to one host.
type Attempt struct {
	Channel    string   `json:"channel"`
	Role       string   `json:"role"`
	Target     string   `json:"target"`                // URL or address tried
	Via        string   `json:"via,omitempty"`         // proxy used, credentials redacted
	Skipped    string   `json:"skipped,omitempty"`     // why the channel could not be tried
	Exit       int      `json:"exit"`                  // curl exit code (0 = transfer done)
	Err        string   `json:"err,omitempty"`         // curl's error line, or the Go error text
	Errno      string   `json:"errno,omitempty"`       // e.g. ECONNREFUSED, ENETUNREACH
	Connected  bool     `json:"connected,omitempty"`   // direct: the connect was accepted (Err is then the read's)
	Status     int      `json:"status,omitempty"`      // HTTP status of the final response
	ProxyError string   `json:"proxy_error,omitempty"` // X-Proxy-Error header, e.g. blocked-by-allowlist
	Body       string   `json:"body,omitempty"`        // first bytes of the response body
	Resolved   []string `json:"resolved,omitempty"`    // DNS answers
	ElapsedMS  int64    `json:"elapsed_ms"`
}

// Listener is a TCP socket in LISTEN state seen inside the sandbox.
type Listener struct {
	Addr string `json:"addr"`
	Port int    `json:"port"`
}

// Observation is everything the probe saw.
type Observation struct {
	Nonce     string            `json:"nonce"`
	ProxyEnv  map[string]string `json:"proxy_env,omitempty"` // redacted
	Listeners []Listener        `json:"listeners"`
	Attempts  []Attempt         `json:"attempts"`
	FS        []FSResult        `json:"fs,omitempty"`
	Raw       []crafted.Result  `json:"raw,omitempty"`
	Problems  []string          `json:"problems,omitempty"` // harness trouble seen inside (tool missing)
	Limits    *limits.Result    `json:"limits,omitempty"`
	UID       int               `json:"uid"`
	// DurationMS is how long the probe took from reading its spec to its report: the sandbox's
	// share of a sandboxed run is the rest.
	DurationMS int64 `json:"duration_ms"`
}

// Markers frame the probe's output so it can be found among whatever the sandbox prints.
const (
	RanMarker   = "SANDCHECK-SANDBOX-RAN"
	BeginMarker = "SANDCHECK-OBSERVATION-BEGIN"
	EndMarker   = "SANDCHECK-OBSERVATION-END"
)

// Arg is the argv[1] that turns a sandcheck (or suite test) binary into the probe.
const Arg = "__sandcheck_probe"

// MaybeRun runs the probe and exits when argv asks for it. Binaries that carry the probe call it
// first thing in main or TestMain.
func MaybeRun() {
	seccomp.MaybeRun()  // the seccomp stand-in a fault runs inside the sandbox
	limits.MaybeRun()   // the limits class's memory child
	sentinel.MaybeRun() // the process outside the sandbox a command must not signal
	if len(os.Args) == 3 && os.Args[1] == usernsArg {
		os.Exit(usernsChild(os.Args[2])) // a check's step in a user namespace of its own
	}
	if len(os.Args) < 3 || os.Args[1] != Arg {
		return
	}
	os.Exit(Main(os.Args[2], os.Stdout))
}

// Main reads the spec file, probes, and writes the framed observation to w.
func Main(specFile string, w io.Writer) int {
	raw, err := os.ReadFile(specFile)
	if err != nil {
		fmt.Fprintf(w, "%s\nprobe: read spec: %v\n", RanMarker, err)
		return 2
	}
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		fmt.Fprintf(w, "%s\nprobe: parse spec %s: %v\n", RanMarker, specFile, err)
		return 2
	}
	fmt.Fprintf(w, "%s %s\n", RanMarker, s.Nonce)
	start := time.Now()
	obs := Run(s)
	obs.DurationMS = time.Since(start).Milliseconds()
	// Exactly one frame, in one write: Parse treats a second, different frame as forged.
	b, _ := json.Marshal(obs)
	fmt.Fprintf(w, "%s %s\n%s\n%s %s\n", BeginMarker, s.Nonce, b, EndMarker, s.Nonce)
	return 0
}

// Run tries every channel against every host in two rounds: the first channel's requests (both
// hosts at once), then every other request at once. The first round goes alone because the
// sandbox's own start-up is part of what is measured: a relay that comes up slowly fails the
// requests made before it listens, and the first channel's requests are the seed's first command.
// After it, nothing is gained by waiting for one request's answer before asking the next: that
// only adds their times up (four rounds after the first, channel after channel, took the probe
// from ~126 to ~138 ms here, median of 20). When a fault must act between two requests (SyncAfterFirst), the very first
// request (the allowed host over the first channel) goes alone and the rest wait for the fault's
// ack. Attempts are listed in channel x host order.
func Run(s Spec) *Observation {
	if s.Timeout <= 0 {
		s.Timeout = 4 * time.Second
	}
	if s.Curl == "" {
		s.Curl = "curl"
	}
	obs := &Observation{Nonce: s.Nonce, ProxyEnv: proxyEnv(), UID: os.Getuid()}
	obs.Listeners, _ = listeners()
	type pair struct {
		ch string
		h  Host
	}
	var pairs []pair
	for _, ch := range s.Channels {
		for _, h := range s.Hosts {
			pairs = append(pairs, pair{ch, h})
		}
	}
	attempts := make([]Attempt, len(pairs))
	problems := make([][]string, len(pairs))
	raws := make([]crafted.Result, len(s.Raw))
	one := func(i int) {
		o := &Observation{}
		attempts[i] = attempt(s, pairs[i].ch, pairs[i].h, o)
		problems[i] = o.Problems
	}
	first := 0 // the first round: the first channel's requests
	for first < len(pairs) && pairs[first].ch == pairs[0].ch {
		first++
	}
	if s.SyncAfterFirst {
		first = min(1, len(pairs)) // the first request alone, then the fault's ack
	}
	step := 0
	for _, round := range [][2]int{{0, first}, {first, len(pairs)}} {
		i, j := round[0], round[1]
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Go(func() { one(k) })
		}
		wg.Wait()
		for ; step < j; step++ {
			mark(s, step+1)
		}
	}
	// Raw requests (crafted proxy and SOCKS lines) after the channels, all at once: each is its own
	// connection to the sandbox's proxy, and none is a channel's first request. One that breaks
	// the proxy for whatever follows (a bridge swapped) goes last, alone.
	var wg sync.WaitGroup
	for i := range s.Raw {
		if s.Raw[i].Tamper != crafted.TamperBridge {
			wg.Go(func() { raws[i] = crafted.Send(s.Raw[i], s.Nonce, s.Timeout) })
		}
	}
	wg.Wait()
	for i := range s.Raw {
		if s.Raw[i].Tamper == crafted.TamperBridge {
			raws[i] = crafted.Send(s.Raw[i], s.Nonce, s.Timeout)
		}
	}
	obs.Raw = raws
	obs.Attempts = attempts
	for _, ps := range problems {
		for _, p := range ps {
			obs.Problems = appendOnce(obs.Problems, p)
		}
	}
	if len(s.FS) > 0 {
		obs.FS = runFS(s.FS)
	}
	if s.Limits != nil {
		r := limits.Measure(*s.Limits)
		obs.Limits = &r
	}
	return obs
}

func attempt(s Spec, ch string, h Host, obs *Observation) Attempt {
	start := time.Now()
	var a Attempt
	switch ch {
	case model.ChanHTTP:
		a = curlAttempt(s, obs, "http://"+h.Addr+path(s, ch), nil)
	case model.ChanHTTPS:
		var args []string
		if s.CAFile != "" {
			args = []string{"--cacert", s.CAFile}
		}
		a = curlAttempt(s, obs, "https://"+h.Addr+path(s, ch), args)
	case model.ChanSOCKS:
		p := crafted.SOCKSProxy()
		if p == "" {
			a = Attempt{Skipped: "no socks proxy in the environment (ALL_PROXY/FTP_PROXY)"}
			break
		}
		a = curlAttempt(s, obs, "http://"+h.Addr+path(s, ch), []string{"--proxy", p})
		a.Via = redact(p)
	case model.ChanDirect:
		a = directAttempt(s, h)
	case model.ChanDNS:
		a = dnsAttempt(s, h)
	default:
		a = Attempt{Skipped: "unknown channel"}
	}
	a.Channel, a.Role = ch, h.Role
	a.ElapsedMS = time.Since(start).Milliseconds()
	return a
}

// RequestPath names the channel and the session in every request, so the fixture hosts' own
// records say which session reached them over which channel: the classifier matches the servers'
// logs to the probe's report by it.
func RequestPath(ch, nonce string) string { return "/" + ch + "/" + nonce }

// DNSName is the fresh name the dns channel asks for, under the host of the given role.
func DNSName(nonce, role string) string { return "q-" + nonce + "." + role + ".sandcheck.test" }

func path(s Spec, ch string) string { return RequestPath(ch, s.Nonce) }

// mark records progress and, after the first request, waits for a fault's ack when asked to.
func mark(s Spec, step int) {
	if s.MarkDir == "" {
		return
	}
	f := fmt.Sprintf("%s/step-%d", s.MarkDir, step)
	_ = os.WriteFile(f, nil, 0o644)
	if step != 1 || !s.SyncAfterFirst {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(f + ".ack"); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY", "NO_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy"}

func proxyEnv() map[string]string {
	m := map[string]string{}
	for _, k := range proxyVars {
		if v, ok := os.LookupEnv(k); ok {
			m[k] = redact(v)
		}
	}
	return m
}

// redact hides proxy credentials (srt puts a per-session secret in the userinfo).
func redact(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// listeners lists the TCP sockets in LISTEN state inside the sandbox, so a report can say
// whether anything listened on the proxy port: from sock_diag netlink, or from /proc/net/tcp{,6}
// where a sandbox denies netlink sockets.
func listeners() ([]Listener, error) {
	out, err := listenersDiag()
	if err != nil {
		out, err = listenersProc()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out, err
}

// listenersProc reads the LISTEN sockets from /proc/net/tcp and /proc/net/tcp6.
func listenersProc() ([]Listener, error) {
	var out []Listener
	var errs []error
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, ParseProcNetTCP(b)...)
	}
	return out, errors.Join(errs...)
}

// ParseProcNetTCP extracts LISTEN sockets from the text of /proc/net/tcp or /proc/net/tcp6.
func ParseProcNetTCP(b []byte) []Listener {
	var out []Listener
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		host, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		var p int
		fmt.Sscanf(port, "%X", &p)
		out = append(out, Listener{Addr: hexAddr(host), Port: p})
	}
	return out
}

// hexAddr renders the kernel's little-endian hex address; only the common cases matter here.
func hexAddr(h string) string {
	switch h {
	case "00000000":
		return "0.0.0.0"
	case "0100007F":
		return "127.0.0.1"
	case "00000000000000000000000000000000":
		return "::"
	case "00000000000000000000000001000000":
		return "::1"
	}
	if len(h) == 8 {
		var b [4]byte
		for i := 0; i < 4; i++ {
			fmt.Sscanf(h[2*i:2*i+2], "%02X", &b[3-i])
		}
		return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3])
	}
	return h
}
