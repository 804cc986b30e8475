package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/errno"
)

const bodyLimit = 512

// curlAttempt runs curl the way a user's command would: it honours the proxy environment unless
// extra args say otherwise. curl's exit code and its one-line error are the seed's vocabulary
// ("curl: (7) Failed to connect to localhost port 3128"), so they are kept verbatim.
func curlAttempt(s Spec, obs *Observation, target string, extra []string) Attempt {
	a := Attempt{Target: target}
	secs := strconv.FormatFloat(s.Timeout.Seconds(), 'f', 1, 64)
	args := append([]string{"-sS", "-i", "--max-time", secs, "--connect-timeout", secs}, extra...)
	args = append(args, target)
	cmd := exec.Command(s.Curl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		a.Exit = ee.ExitCode()
	case err != nil:
		a.Exit = -1
		a.Err = err.Error()
		obs.Problems = appendOnce(obs.Problems, "curl not runnable inside the sandbox: "+err.Error())
		return a
	}
	if e := strings.TrimSpace(lastLine(stderr.String())); e != "" {
		a.Err = e
	}
	parseHTTP(stdout.Bytes(), &a)
	return a
}

// parseHTTP reads curl -i output: possibly several header blocks (a CONNECT response first, then
// the origin's), then the body. The last block's status and the proxy's error header are kept.
func parseHTTP(b []byte, a *Attempt) {
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if !strings.HasPrefix(line, "HTTP/") {
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 {
			a.Status, _ = strconv.Atoi(f[1])
		}
		for {
			h, err := r.ReadString('\n')
			h = strings.TrimRight(h, "\r\n")
			if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(k, "X-Proxy-Error") {
				a.ProxyError = strings.TrimSpace(v)
			}
			if h == "" || err != nil {
				break
			}
		}
		// A "200 Connection established" block is followed by the origin's own headers.
		if peek, _ := r.Peek(5); string(peek) == "HTTP/" {
			continue
		}
		rest := make([]byte, bodyLimit)
		n, _ := r.Read(rest)
		a.Body = string(rest[:n])
		return
	}
}

// directAttempt ignores every proxy: a raw TCP connection to the host's address, as a program
// that does not read proxy variables would make. Whether the connect was accepted is recorded
// apart from the read: accepted-then-silent is traffic that got out, not "no route".
func directAttempt(s Spec, h Host) Attempt {
	addr := net.JoinHostPort(h.IP, "80")
	a := Attempt{Target: addr}
	conn, err := net.DialTimeout("tcp", addr, s.Timeout)
	if err != nil {
		a.Exit, a.Err, a.Errno = 1, err.Error(), errno.Name(err)
		return a
	}
	defer conn.Close()
	a.Connected = true
	conn.SetDeadline(time.Now().Add(s.Timeout))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path(s, model.ChanDirect), h.Addr); err != nil {
		a.Exit, a.Err, a.Errno = 1, "write request: "+err.Error(), errno.Name(err)
		return a
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		a.Exit, a.Err, a.Errno = 1, "read reply: "+err.Error(), errno.Name(err)
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	body := make([]byte, bodyLimit)
	n, _ := resp.Body.Read(body)
	a.Body = string(body[:n])
	return a
}

// dnsAttempt asks the fixture resolver directly (never this host's resolver) for a fresh name
// under the host's role. An answer means DNS traffic left the sandbox: a channel for exfiltration.
func dnsAttempt(s Spec, h Host) Attempt {
	if s.Resolver == "" {
		return Attempt{Skipped: "no fixture resolver"}
	}
	name := DNSName(s.Nonce, h.Role)
	a := Attempt{Target: name + " @" + s.Resolver}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", s.Resolver)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	ips, err := r.LookupHost(ctx, name)
	if err != nil {
		a.Exit, a.Err, a.Errno = 1, err.Error(), errno.Name(err)
		return a
	}
	a.Resolved = ips
	return a
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
