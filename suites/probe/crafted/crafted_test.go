//go:build linux

package crafted

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/pty"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// lineServer answers every connection's first line with "got LINE".
func lineServer(t *testing.T, ln net.Listener) {
	t.Helper()
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "got %s", line)
			}()
		}
	}()
}

// TestThroughIOURing: a socket and a connect submitted through io_uring reach a unix socket
// (path and abstract) and a TCP listener, as the plain system calls would.
func TestThroughIOURing(t *testing.T) {
	s := spec{Nonce: "n1", Timeout: 2 * time.Second}
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	lineServer(t, ln)
	abs := fmt.Sprintf("@sandcheck-test-%d", os.Getpid())
	aln, err := net.Listen("unix", abs)
	if err != nil {
		t.Fatal(err)
	}
	lineServer(t, aln)
	for _, addr := range []string{sock, abs} {
		r := Send(Request{ID: "u", Via: ViaUringUnix, Addr: addr}, s.Nonce, s.Timeout)
		if r.Errno == "ENOSYS" || strings.Contains(r.Err, "io_uring_setup") {
			skip.Missing(t, "io_uring not available here: %s", r.Err)
		}
		if !r.Connected || r.Body != "got "+Payload("n1", "u")+"\n" {
			t.Errorf("uring-unix %s: %+v", addr, r)
		}
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	go http.Serve(tcp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "path="+r.URL.Path) }))
	r := Send(Request{ID: "t", Via: ViaUringTCP, Addr: tcp.Addr().String()}, s.Nonce, s.Timeout)
	if !r.Connected || !strings.Contains(r.Body, "path="+BypassPath("n1", "t")) {
		t.Errorf("uring-tcp: %+v", r)
	}
	// A connection refused comes back as the connect's errno.
	addr := tcp.Addr().String()
	tcp.Close()
	if r := Send(Request{ID: "t", Via: ViaUringTCP, Addr: addr}, s.Nonce, s.Timeout); r.Connected || r.Errno != "ECONNREFUSED" {
		t.Errorf("uring-tcp to a closed port: %+v", r)
	}
}

// TestSOCKSRequestBytes: the name goes out byte for byte, NUL and CR/LF included; IP address
// types carry the address.
func TestSOCKSRequestBytes(t *testing.T) {
	b, err := socksRequest(Request{Host: "a\x00b\r\n", Port: 80})
	if err != nil || !bytes.Equal(b, []byte{5, 1, 0, 3, 5, 'a', 0, 'b', '\r', '\n', 0, 80}) {
		t.Errorf("domain request = %v, %v", b, err)
	}
	b, err = socksRequest(Request{Host: "198.18.0.3", Port: 80, ATYP: 1})
	if err != nil || !bytes.Equal(b, []byte{5, 1, 0, 1, 198, 18, 0, 3, 0, 80}) {
		t.Errorf("ipv4 request = %v, %v", b, err)
	}
	if _, err := socksRequest(Request{Host: strings.Repeat("a", 256), Port: 80}); err == nil {
		t.Error("a 256-byte SOCKS5 name was accepted")
	}
}

// TestTIOCSTI: the probe's TIOCSTI lands in the input queue of its controlling terminal,
// where the terminal's reader finds it; without one (a new session, as bwrap --new-session
// gives) an unprivileged caller is refused. On a kernel that turned legacy TIOCSTI off
// (dev.tty.legacy_tiocsti=0, Linux 6.2 on) an unprivileged caller is refused with EIO either way,
// and the probe must say so; a caller with CAP_SYS_ADMIN still pushes, so the probe's push is
// measured on every kernel and the test needs no kernel knob.
func TestTIOCSTI(t *testing.T) {
	skip.UnlessRoot(t, "running the child as another user")
	legacy := true // before 6.2 there is no knob: always on
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil {
		legacy = strings.TrimSpace(string(b)) != "0"
	}
	refused := "EPERM" // not the caller's terminal
	if !legacy {
		refused = "EIO"
	}
	// A copy the other user can run (go's build directory is root's).
	dir, err := os.MkdirTemp("", "sandcheck-probe-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self := filepath.Join(dir, "probe.test")
	if b, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(self, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534} // not root, whose CAP_SYS_ADMIN pushes into any terminal
	cases := []struct {
		name     string
		ctty     bool
		cred     *syscall.Credential // nil: root
		injected bool
		errno    string // the probe's errno when refused
	}{
		{"unprivileged, controlling terminal", true, nobody, legacy, map[bool]string{true: "", false: "EIO"}[legacy]},
		{"unprivileged, no controlling terminal", false, nobody, false, refused},
		{"CAP_SYS_ADMIN, controlling terminal", true, nil, true, ""},
	}
	for _, c := range cases {
		p, err := pty.Open()
		if err != nil {
			skip.Missing(t, "no pseudo-terminal: %v", err)
		}
		cmd := exec.Command(self, "-test.run", "^$")
		cmd.Env = append(os.Environ(), "SANDCHECK_PROBE_TEST_TIOCSTI=1")
		cmd.Stdin = p.Slave
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: c.ctty, Ctty: 0, Credential: c.cred}
		if err := cmd.Run(); err != nil {
			p.Close()
			t.Fatalf("%s: helper: %v\n%s", c.name, err, out.String())
		}
		got, err := p.Injected()
		p.Close()
		if err != nil {
			t.Fatalf("read the terminal's input queue: %v", err)
		}
		injected := strings.Contains(string(got), Payload("n2", "tty"))
		if injected != c.injected || c.injected != strings.Contains(out.String(), "connected=true") {
			t.Errorf("%s (legacy TIOCSTI %v): queue %q, probe said %s", c.name, legacy, got, out.String())
		}
		if c.errno != "" && !strings.Contains(out.String(), "errno="+c.errno+" ") {
			t.Errorf("%s (legacy TIOCSTI %v): %s, want errno %s", c.name, legacy, out.String(), c.errno)
		}
	}
}

// TestMain doubles as the TIOCSTI helper: a child whose stdin is the test's terminal.
func TestMain(m *testing.M) {
	if os.Getenv("SANDCHECK_PROBE_TEST_TIOCSTI") == "1" {
		r := Send(Request{ID: "tty", Via: ViaTIOCSTI}, "n2", time.Second)
		fmt.Printf("connected=%v errno=%s err=%s\n", r.Connected, r.Errno, r.Err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// proxyAt stands in for the HTTP proxy of the environment: a server on loopback that answers
// "ok" to every request after handing it to seen.
func proxyAt(t *testing.T, seen func(*http.Request)) {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		fmt.Fprint(w, "ok")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("HTTP_PROXY", "http://"+ln.Addr().String())
	t.Setenv("http_proxy", "http://"+ln.Addr().String())
}

// TestMethodAndPipelined: a case's method goes as written (case and all) with an empty body, and
// a pipelined case sends a harmless GET first and its own request second, on one connection.
func TestMethodAndPipelined(t *testing.T) {
	type seen struct{ method, path, conn string }
	got := make(chan seen, 8)
	proxyAt(t, func(r *http.Request) { got <- seen{r.Method, r.URL.Path, r.RemoteAddr} })

	res := Send(Request{ID: "m.post", Via: ViaHTTP, Host: "allowed.sandcheck.test", Port: 80, Method: "post"}, "n0nce", 3*time.Second)
	if s := <-got; res.Status != 200 || s.method != "post" || s.path != BypassPath("n0nce", "m.post") {
		t.Fatalf("method: %+v, server saw %+v", res, s)
	}
	res = Send(Request{ID: "m.pipe", Via: ViaHTTP, Host: "allowed.sandcheck.test", Port: 80, Method: "POST", Pipelined: true}, "n0nce", 3*time.Second)
	first, second := <-got, <-got
	if res.Status != 200 || first.method != "GET" || first.path != BypassPath("n0nce", "m.pipe")+FirstSuffix ||
		second.method != "POST" || second.path != BypassPath("n0nce", "m.pipe") || first.conn != second.conn {
		t.Fatalf("pipelined: %+v, server saw %+v then %+v", res, first, second)
	}
}

// TestFrontAsksTheFrontsPath: a front case asks for its path under the front's prefix with its
// Host header naming the backend, the target still the allowed host. (Read raw: Go's request
// reader takes an absolute-form request's Host from its target.)
func TestFrontAsksTheFrontsPath(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br, seen := bufio.NewReader(c), ""
		for {
			line, err := br.ReadString('\n')
			line = strings.TrimRight(line, "\r\n")
			if err != nil || line == "" {
				break
			}
			if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], "HTTP/") {
				seen = f[1] + seen
			} else if strings.HasPrefix(line, "Host:") {
				seen += " " + line
			}
		}
		got <- seen
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	}()
	t.Setenv("HTTP_PROXY", "http://"+ln.Addr().String())
	res := Send(Request{ID: "f", Via: ViaHTTP, Host: "allowed.sandcheck.test", Port: 80, Front: "denied.sandcheck.test:80"}, "n0nce", 3*time.Second)
	want := "http://allowed.sandcheck.test:80" + model.FrontPrefix + "n0nce/f Host: denied.sandcheck.test:80"
	if s := <-got; res.Status != 200 || s != want {
		t.Fatalf("front: %+v, proxy saw %q, want %q", res, s, want)
	}
}

// TestURingClosesItsSocketOnce: the io_uring request's socket is closed once, when the request
// ends. Closed twice (once by hand, once by a finalizer at the next garbage collection), the
// second close lands on whatever descriptor took its number meanwhile: another request's
// connection, which then fails with EBADF (a control refused in a trial, under load).
func TestURingClosesItsSocketOnce(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go http.Serve(tcp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for i := 0; i < 20; i++ {
		r := Send(Request{ID: "t", Via: ViaUringTCP, Addr: tcp.Addr().String()}, "n", 2*time.Second)
		if r.Errno == "ENOSYS" || strings.Contains(r.Err, "io_uring_setup") {
			skip.Missing(t, "io_uring not available here: %s", r.Err)
		}
		// The next descriptor takes the number the request's socket had.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // finalizers run on their own goroutine
		if _, err := pw.Write([]byte("x")); err != nil {
			t.Fatalf("round %d: a descriptor opened after the request was closed under it: %v", i, err)
		}
		pr.Close()
		pw.Close()
	}
}
