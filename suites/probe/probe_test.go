package probe

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// Recorded inside srt 0.0.83: relays listening on :1080 and :3128 (tcp6, v4-mapped), plus two
// TIME_WAIT client sockets that must not count as listeners.
const procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0438 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5451 1 00000000b50560f9 100 0 0 10 0
   1: 00000000000000000000000000000000:0C38 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6285 1 0000000038d5165d 100 0 0 10 0
`
const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:AB84 0100007F:0C38 06 00000000:00000000 03:0000176C 00000000     0        0 0 3 00000000f99a5b35
`

func TestParseProcNetTCP(t *testing.T) {
	l := ParseProcNetTCP([]byte(procNetTCP6))
	if len(l) != 2 || l[0].Port != 1080 || l[1].Port != 3128 || l[0].Addr != "::" {
		t.Fatalf("tcp6 listeners = %+v", l)
	}
	if l := ParseProcNetTCP([]byte(procNetTCP)); len(l) != 0 {
		t.Fatalf("TIME_WAIT counted as listener: %+v", l)
	}
}

func TestParseHTTPKeepsOriginAfterConnect(t *testing.T) {
	out := "HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsandcheck-fixture role=allowed token=abc\n"
	var a Attempt
	parseHTTP([]byte(out), &a)
	if a.Status != 200 || !strings.Contains(a.Body, "token=abc") {
		t.Fatalf("got %+v", a)
	}
	blocked := "HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist\n"
	a = Attempt{}
	parseHTTP([]byte(blocked), &a)
	if a.Status != 403 || a.ProxyError != "blocked-by-allowlist" || !strings.Contains(a.Body, "blocked") {
		t.Fatalf("got %+v", a)
	}
}

func TestParseFindsOnlyOurNonce(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("noise from the sandbox\n" + RanMarker + " other\n")
	buf.WriteString(BeginMarker + " other\n{\"nonce\":\"other\"}\n" + EndMarker + " other\n")
	out, err := Parse(buf.Bytes(), "mine")
	if err != nil || out.Ran || out.Obs != nil {
		t.Fatalf("foreign nonce accepted: %+v %v", out, err)
	}
	buf.WriteString(RanMarker + " mine\n" + BeginMarker + " mine\n{\"nonce\":\"mine\",\"attempts\":[{\"channel\":\"http\"}]}\n" + EndMarker + " mine\n")
	out, err = Parse(buf.Bytes(), "mine")
	if err != nil || !out.Ran || out.Obs == nil || len(out.Obs.Attempts) != 1 {
		t.Fatalf("own output not found: %+v %v", out, err)
	}
}

func TestRedactHidesProxyCredentials(t *testing.T) {
	got := redact("http://srt.Zm9v:secret@localhost:3128")
	if strings.Contains(got, "secret") || !strings.Contains(got, "localhost:3128") {
		t.Fatalf("redact = %q", got)
	}
}

func frame(nonce, body string) string {
	return BeginMarker + " " + nonce + "\n" + body + "\n" + EndMarker + " " + nonce + "\n"
}

func TestParseFrames(t *testing.T) {
	real := `{"nonce":"n1","attempts":[{"channel":"http","role":"allowed","status":403}]}`
	forged := `{"nonce":"n1","attempts":[{"channel":"http","role":"allowed","status":200,"body":"token"}]}`
	ran := RanMarker + " n1\n"
	cases := []struct {
		name, stdout string
		wantObs      bool
		wantErr      string
	}{
		{"one frame", ran + frame("n1", real), true, ""},
		{"identical duplicate", ran + frame("n1", real) + "noise\n" + frame("n1", real), true, ""},
		{"forged second frame", ran + frame("n1", real) + frame("n1", forged), false, "two observations for one nonce"},
		{"forged first frame", ran + frame("n1", forged) + frame("n1", real), false, "two observations for one nonce"},
		{"opened twice", ran + BeginMarker + " n1\n" + frame("n1", real), false, "opened twice"},
		{"end without begin", ran + EndMarker + " n1\n" + frame("n1", real), false, "without a begin"},
		{"never ended", ran + BeginMarker + " n1\n" + real + "\n", false, "never ended"},
		{"other nonce only", RanMarker + " n2\n" + frame("n2", forged), false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Parse([]byte(c.stdout), "n1")
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			if (out.Obs != nil) != c.wantObs {
				t.Fatalf("obs = %+v, want present=%v", out.Obs, c.wantObs)
			}
			if out.Obs != nil && out.Obs.Attempts[0].Status != 403 {
				t.Fatalf("took the wrong frame: %+v", out.Obs.Attempts[0])
			}
		})
	}
}

// A line longer than the scanner's limit is an error naming it, never a silently dropped marker.
func TestParseLongLineIsAnError(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString(strings.Repeat("x", 9<<20) + "\n")
	buf.WriteString(RanMarker + " n1\n" + frame("n1", `{"nonce":"n1"}`))
	out, err := Parse(buf.Bytes(), "n1")
	if err == nil || !strings.Contains(err.Error(), "token too long") {
		t.Fatalf("err = %v, want the scanner's error", err)
	}
	if out.Obs != nil {
		t.Fatalf("frame behind an unreadable line taken: %+v", out.Obs)
	}
}

// The probe prints exactly one frame, which Parse takes.
func TestMainPrintsOneFrame(t *testing.T) {
	spec := t.TempDir() + "/spec.json"
	if err := os.WriteFile(spec, []byte(`{"nonce":"n1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Main(spec, &out); code != 0 {
		t.Fatalf("Main = %d: %s", code, out.String())
	}
	if n := strings.Count(out.String(), BeginMarker+" n1\n"); n != 1 {
		t.Fatalf("%d frames:\n%s", n, out.String())
	}
	if p, err := Parse(out.Bytes(), "n1"); err != nil || !p.Ran || p.Obs == nil {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}

// The direct channel records the connect apart from the read: accepted-then-silent is
// Connected with a read timeout, refused is not Connected.
func TestDirectRecordsConnectApartFromRead(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.77:80")
	if err != nil {
		skip.Missing(t, "cannot listen on port 80 here (needs root): %v", err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // held open, never answered
		}
	}()
	s := Spec{Nonce: "n1", Timeout: 300 * time.Millisecond}
	a := directAttempt(s, Host{Role: "denied", Addr: "127.0.0.77", IP: "127.0.0.77"})
	if !a.Connected || a.Errno != "ETIMEDOUT" || a.Status != 0 {
		t.Fatalf("accepted then silent: %+v", a)
	}
	(<-accepted).Close()
	ln.Close()
	a = directAttempt(s, Host{Role: "denied", Addr: "127.0.0.77", IP: "127.0.0.77"})
	if a.Connected || a.Errno != "ECONNREFUSED" {
		t.Fatalf("refused: %+v", a)
	}
}

// The first channel's requests go first, both hosts at once; every other request goes after
// them, all at once: a stand-in curl logs each request's start and end, and the requests of the
// second round wait until all four have started (they can meet only if they run at once). With
// SyncAfterFirst the first request goes alone, and the second round waits for the fault's ack.
func TestFirstChannelFirstThenTheRestAtOnce(t *testing.T) {
	t.Setenv("ALL_PROXY", "socks5h://127.0.0.1:9") // the socks channel's proxy (never reached)
	for _, sync := range []bool{false, true} {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		curl := filepath.Join(dir, "curl")
		// The channel is the request path's first segment (RequestPath), the host the URL's.
		script := `#!/bin/sh
for a; do u=$a; done
h=${u#*://}; p=${h#*/}; h=${h%%/*}; ch=${p%%/*}
echo "start $ch $h" >> ` + log + `
touch ` + dir + `/started-$ch-$h
[ -e ` + dir + `/acked ] || touch ` + dir + `/early-$ch-$h
if [ "$ch" != http ]; then
  i=0; while [ $i -lt 1000 ] && [ $(ls ` + dir + ` | grep -c '^started-[hs][to]' ) -lt 6 ]; do sleep 0.01; i=$((i+1)); done
fi
echo "end $ch $h" >> ` + log + "\n"
		if err := os.WriteFile(curl, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		marks := filepath.Join(dir, "marks")
		os.MkdirAll(marks, 0o755)
		acked := filepath.Join(marks, "step-1.ack")
		s := Spec{Nonce: "n", Curl: curl, Timeout: 30 * time.Second, MarkDir: marks, SyncAfterFirst: sync,
			Hosts:    []Host{{Role: "allowed", Addr: "a.test"}, {Role: "denied", Addr: "d.test"}},
			Channels: []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}}
		if sync {
			// The fault's ack comes a moment after the first request's mark: nothing of the
			// second round may start before it.
			go func() {
				for {
					if _, err := os.Stat(filepath.Join(marks, "step-1")); err == nil {
						time.Sleep(50 * time.Millisecond)
						os.WriteFile(filepath.Join(dir, "acked"), nil, 0o644)
						os.WriteFile(acked, nil, 0o644)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
		}
		obs := Run(s)
		if len(obs.Attempts) != 6 || obs.Attempts[0].Role != "allowed" || obs.Attempts[5].Channel != model.ChanSOCKS {
			t.Fatalf("attempts out of order: %+v", obs.Attempts)
		}
		b, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		pos := map[string]int{}
		for i, l := range lines {
			pos[l] = i
		}
		if len(pos) != 12 {
			t.Fatalf("sync=%v: log %q", sync, lines)
		}
		later := []string{"https a.test", "https d.test", "socks a.test", "socks d.test"}
		for _, r := range later {
			if !sync {
				for _, h := range []string{"a.test", "d.test"} {
					if pos["end http "+h] > pos["start "+r] {
						t.Errorf("%s started before the first channel was done: %q", r, lines)
					}
				}
			}
			for _, r2 := range later {
				if pos["start "+r] > pos["end "+r2] {
					t.Errorf("sync=%v: the second round's requests did not run at once: %q", sync, lines)
				}
			}
		}
		if sync {
			if lines[0] != "start http a.test" || lines[1] != "end http a.test" {
				t.Errorf("sync: the first request did not go alone: %q", lines)
			}
			early, _ := filepath.Glob(filepath.Join(dir, "early-*"))
			if len(early) != 1 || filepath.Base(early[0]) != "early-http-a.test" {
				t.Errorf("sync: requests started before the fault's ack: %q", early)
			}
		}
		for i := 1; i <= 6; i++ {
			if _, err := os.Stat(filepath.Join(marks, "step-"+strconv.Itoa(i))); err != nil {
				t.Errorf("sync=%v: no mark for step %d", sync, i)
			}
		}
	}
}

// listeners finds a socket listening here, over sock_diag and over /proc/net/tcp alike (the
// fallback where a sandbox denies netlink), with its address as the kernel has it.
func TestListenersSeeAListeningSocket(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln6, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		skip.Missing(t, "no IPv6 loopback: %v", err)
	}
	defer ln6.Close()
	port, port6 := ln.Addr().(*net.TCPAddr).Port, ln6.Addr().(*net.TCPAddr).Port
	conn, err := net.Dial("tcp4", ln.Addr().String()) // an established socket must not count
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	local := conn.LocalAddr().(*net.TCPAddr).Port
	diag, err := listenersDiag()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := listenersProc()
	if err != nil {
		t.Fatal(err)
	}
	for name, ls := range map[string][]Listener{"sock_diag": diag, "/proc/net/tcp": proc} {
		want := map[Listener]bool{{Addr: "127.0.0.1", Port: port}: false, {Addr: "::1", Port: port6}: false}
		for _, l := range ls {
			if _, ok := want[l]; ok {
				want[l] = true
			}
			if l.Port == local {
				t.Errorf("%s: the client socket's port %d is listed as listening: %+v", name, local, l)
			}
		}
		for l, seen := range want {
			if !seen {
				t.Errorf("%s: %+v not listed: %+v", name, l, ls)
			}
		}
	}
}

// TestBridgeSwapGoesLast: a raw request that breaks the proxy for what follows (the bridge
// class's swap) is sent after every other raw request has had its answer, the controls' too,
// whichever comes first in the spec.
func TestBridgeSwapGoesLast(t *testing.T) {
	var mu sync.Mutex
	var order []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "bridge") {
			time.Sleep(200 * time.Millisecond) // the others answer slowly
		}
		mu.Lock()
		order = append(order, filepath.Base(r.URL.Path))
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	raw := func(id, tamper string) crafted.Request {
		return crafted.Request{ID: id, Via: crafted.ViaHTTP, Host: "allowed.test", Port: 80, Tamper: tamper, Swap: t.TempDir()}
	}
	s := Spec{Nonce: "n", Timeout: 5 * time.Second,
		Raw: []crafted.Request{raw("bridge", crafted.TamperBridge), raw("control-http", ""), raw("other", "")}}
	obs := Run(s)
	if len(obs.Raw) != 3 || obs.Raw[0].ID != "bridge" || len(obs.Raw[0].Tampered) != 1 {
		t.Fatalf("results: %+v", obs.Raw)
	}
	if len(order) != 3 || order[2] != "bridge" {
		t.Errorf("the proxy saw %q, want the bridge request last", order)
	}
}
