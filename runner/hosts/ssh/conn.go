package ssh

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/remote"
)

// dial connects and authenticates.
func (h *Host) dial(ctx context.Context) (*xssh.Client, error) {
	d := net.Dialer{Timeout: h.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", h.addr, err)
	}
	auth := []xssh.AuthMethod{}
	if len(h.signers) > 0 {
		auth = append(auth, xssh.PublicKeys(h.signers...))
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if ac, err := net.Dial("unix", sock); err == nil {
			defer ac.Close()
			auth = append(auth, xssh.PublicKeysCallback(agent.NewClient(ac).Signers))
		}
	}
	cfg := &xssh.ClientConfig{
		User:              h.user,
		Auth:              auth,
		HostKeyCallback:   h.hostKey,
		HostKeyAlgorithms: h.knownAlgorithms(conn.RemoteAddr()),
		Timeout:           h.cfg.DialTimeout,
	}
	conn.SetDeadline(time.Now().Add(h.cfg.DialTimeout))
	c, chans, reqs, err := xssh.NewClientConn(conn, h.addr, cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ssh %s@%s: %w", h.user, h.addr, err)
	}
	conn.SetDeadline(time.Time{})
	client := xssh.NewClient(c, chans, reqs)
	if h.cfg.KeepAlive > 0 {
		go keepAlive(client, h.cfg.KeepAlive)
	}
	return client, nil
}

// knownAlgorithms asks known_hosts which key types it holds for the address, so the server is
// asked for one of those (else a server preferring another type fails the check).
func (h *Host) knownAlgorithms(remote net.Addr) []string {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	probe, _ := xssh.NewPublicKey(pub)
	var ke *knownhosts.KeyError
	var algos []string
	if err := h.known(h.addr, remote, probe); errors.As(err, &ke) {
		seen := map[string]bool{}
		for _, w := range ke.Want {
			for _, a := range algorithmsFor(w.Key.Type()) {
				if !seen[a] {
					seen[a] = true
					algos = append(algos, a)
				}
			}
		}
	}
	return algos
}

func algorithmsFor(keyType string) []string {
	switch keyType {
	case xssh.KeyAlgoRSA:
		return []string{xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, xssh.KeyAlgoRSA}
	default:
		return []string{keyType}
	}
}

func keepAlive(c *xssh.Client, every time.Duration) {
	closed := make(chan struct{})
	go func() { c.Wait(); close(closed) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-closed:
			return
		case <-t.C:
		}
		ok := make(chan error, 1)
		go func() { _, _, err := c.SendRequest("keepalive@openxssh.com", true, nil); ok <- err }()
		select {
		case err := <-ok:
			if err != nil {
				c.Close()
				return
			}
		case <-time.After(3 * every):
			c.Close() // unanswered: the connection is dead; its sessions end now
			return
		case <-closed:
			return
		}
	}
}

// conn returns the live client, reconnecting if the last one was lost; after a loss it kills what
// the cut-off trials left running.
func (h *Host) conn(ctx context.Context) (*xssh.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.run.Closed() {
		return nil, errors.New("host closed")
	}
	if h.client != nil {
		return h.client, nil
	}
	c, err := h.dial(ctx)
	if err != nil {
		return nil, err
	}
	h.client = c
	if h.orphans {
		if _, err := runOn(c, h.run.KillRun(), nil, 15*time.Second); err == nil {
			h.orphans = false
		}
	}
	return c, nil
}

// lost forgets a client whose connection failed (unless already replaced).
func (h *Host) lost(c *xssh.Client, orphaned bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client == c {
		h.client = nil
	}
	if orphaned {
		h.orphans = true
	}
	c.Close()
}

// runOn runs a shell command in a new session and returns its combined output.
func runOn(c *xssh.Client, cmd string, stdin io.Reader, timeout time.Duration) ([]byte, error) {
	s, err := c.NewSession()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out lockedBuffer
	s.Stdout, s.Stderr, s.Stdin = &out, &out, stdin
	done := make(chan error, 1)
	if err := s.Start(cmd); err != nil {
		return nil, err
	}
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		s.Close()
		err = fmt.Errorf("%q: no answer in %s", firstWord(cmd), timeout)
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%w: %s", err, hosts.Tail(out.Bytes(), 300))
	}
	return out.Bytes(), nil
}

// lockedBuffer takes stdout and stderr together (written from two goroutines).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// Prepare implements hosts.Host: connects, makes a per-run directory, copies the binary there
// (SFTP, or `cat` where the server has no SFTP subsystem) and checks that it runs.
func (h *Host) Prepare(ctx context.Context, localBinary string) (string, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return "", err
	}
	bin, err := h.run.Prepare(h.cfg.Binary, localBinary, 30*time.Second,
		func(cmd string, timeout time.Duration) ([]byte, error) { return runOn(c, cmd, nil, timeout) },
		func(src, dst string) error { return upload(c, src, dst) }, h.cfg.Users)
	if err != nil {
		return "", fmt.Errorf("ssh host %s: %w", h.Name(), err)
	}
	return bin, nil
}

func upload(c *xssh.Client, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if sc, err := sftp.NewClient(c, sftp.UseConcurrentWrites(true)); err == nil {
		defer sc.Close()
		out, err := sc.Create(dst)
		if err != nil {
			return err
		}
		if _, err := out.ReadFrom(in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return sc.Chmod(dst, 0o755)
	}
	// No SFTP subsystem: stream it through cat.
	_, err = runOn(c, "cat > "+remote.Shq(dst)+" && chmod 755 "+remote.Shq(dst), in, 5*time.Minute)
	return err
}

// command is the remote shell line of a trial: in the run directory, remote.Run's trial line.
func (h *Host) command(argv []string, trial string) string {
	var b strings.Builder
	if dir := h.run.Dir(); dir != "" {
		b.WriteString("cd " + remote.Shq(dir) + " && ")
	}
	b.WriteString("exec")
	for _, a := range h.run.TrialLine(trial, remote.TrialEnv(h.cfg.Env), argv) {
		b.WriteString(" " + remote.Shq(a))
	}
	return b.String()
}

var _ hosts.Execer = (*Host)(nil)

// Exec implements hosts.Execer; the command's input goes through the session's stdin.
func (h *Host) Exec(ctx context.Context, c hosts.Command, timeout time.Duration) hosts.Result {
	return hosts.Timed(func() hosts.Result { return h.exec(ctx, c, timeout) })
}

func (h *Host) exec(ctx context.Context, cmd hosts.Command, timeout time.Duration) hosts.Result {
	c, err := h.conn(ctx)
	if err != nil {
		return hosts.Result{Exit: -1, Err: err}
	}
	s, err := c.NewSession()
	if err != nil {
		h.lost(c, false)
		return hosts.Result{Exit: -1, Err: fmt.Errorf("open session: %w", err)}
	}
	defer s.Close()
	trial := h.run.NextTrial()
	var stdout bytes.Buffer
	stderr := remote.NewPgidWriter()
	s.Stdout, s.Stderr = &stdout, stderr
	if cmd.Stdout != nil {
		s.Stdout = io.MultiWriter(&stdout, cmd.Stdout)
	}
	if cmd.Stdin != nil {
		s.Stdin = bytes.NewReader(cmd.Stdin)
	}
	if err := s.Start(h.command(cmd.Argv, trial)); err != nil {
		h.lost(c, false)
		return hosts.Result{Exit: -1, Err: fmt.Errorf("start: %w", err)}
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	r := hosts.Result{}
	err, r.TimedOut = hosts.Wait(ctx, done, timeout)
	if r.TimedOut {
		pgid := stderr.WaitPgid(2 * time.Second)
		_, kerr := runOn(c, remote.KillTrial(pgid, trial), nil, 20*time.Second)
		if pgid <= 1 {
			s.Signal(xssh.SIGKILL)
		}
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			s.Close()
			err = <-done
		}
		if kerr != nil {
			// The kill could not be delivered: the connection is gone; kill on reconnect.
			h.lost(c, true)
			r.Err = fmt.Errorf("deadline passed and the connection to %s was lost before the trial could be killed (killed on reconnect): %v", h.addr, kerr)
		}
	}
	var ee *xssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Exit = ee.ExitStatus()
		if ee.Signal() != "" {
			r.Exit = -1
		}
	default:
		r.Exit = -1
		if !r.TimedOut {
			h.lost(c, true)
			r.Err = fmt.Errorf("connection to %s lost mid-trial (%v); what the trial left running is killed on reconnect", h.addr, err)
		}
	}
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.Bytes()
	return r
}

// Close implements hosts.Host: kills what this run left on the host, removes the run directory and
// disconnects.
func (h *Host) Close() error {
	if !h.run.Close() {
		return nil
	}
	h.mu.Lock()
	c, dir := h.client, h.run.Dir()
	h.client = nil
	h.mu.Unlock()
	if c == nil && dir == "" {
		return nil
	}
	if c == nil {
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), h.cfg.DialTimeout)
		c, err = h.dial(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("clean up %s:%s: %w", h.Name(), dir, err)
		}
	}
	defer c.Close()
	cmd := h.run.CloseScript(h.cfg.Users)
	if cmd == "" {
		cmd = h.run.KillRun()
	}
	if _, err := runOn(c, cmd, nil, 60*time.Second); err != nil {
		return fmt.Errorf("clean up %s:%s: %w", h.Name(), dir, err)
	}
	return nil
}
