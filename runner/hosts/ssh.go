package hosts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/matrix"
)

// Environment read by the remote-host drivers (ssh, wsl, vm).
const (
	// EnvSSHKey names a private key file for ssh hosts (default: the SSH agent, then
	// ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
	EnvSSHKey = "SANDCHECK_SSH_KEY"
	// EnvSSHKnownHosts is a list of known_hosts files (os.PathListSeparator) checked for ssh
	// hosts (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts).
	EnvSSHKnownHosts = "SANDCHECK_SSH_KNOWN_HOSTS"
	// EnvPassEnv is a comma-separated list of the runner's environment variables passed to
	// every trial on a remote host, e.g. SANDCHECK_SRT when that host is this machine.
	EnvPassEnv = "SANDCHECK_PASSENV"
	// EnvLinuxBinary names a sandcheck built for linux/amd64 (CGO_ENABLED=0) to copy to Linux
	// hosts when the runner itself is not one (Windows, macOS).
	EnvLinuxBinary = "SANDCHECK_LINUX_BINARY"
)

// Markers in a remote trial's environment: every trial carries its run's and its own, so what it
// started can be found and killed even after it left its process group or the connection died.
const (
	markRun   = "SANDCHECK_HOST_RUN"
	markTrial = "SANDCHECK_HOST_TRIAL"
	pgidTag   = "SANDCHECK-PGID "
)

func init() {
	Register(matrix.KindSSH, func(h matrix.Host) (Host, error) {
		return NewSSH(SSHConfig{Name: h.Name, Address: h.Address, User: h.Login, KeyFile: h.KeyFile, KnownHosts: h.KnownHosts, Users: h.Users})
	})
}

// SSHConfig describes an ssh host. Zero fields take defaults from the environment.
type SSHConfig struct {
	Name    string
	Address string // host[:port], port 22 by default
	User    string // the login (matrix login:); default: the runner's user. Must be root.
	// Users are who the sandbox runs as there (matrix user:); Prepare readies each account.
	Users []string
	// KeyFile is a private key (default $SANDCHECK_SSH_KEY; else the agent at $SSH_AUTH_SOCK and
	// the usual ~/.ssh/id_* files).
	KeyFile string
	// KnownHosts files checked for the host key (default $SANDCHECK_SSH_KNOWN_HOSTS, else
	// ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts). An unknown or changed key is refused.
	KnownHosts []string
	// Env is set for every trial (after the variables named in $SANDCHECK_PASSENV).
	Env map[string]string
	// Binary is the sandcheck copied to the host instead of Prepare's argument (default
	// $SANDCHECK_LINUX_BINARY when the runner's own binary is not a Linux one).
	Binary      string
	DialTimeout time.Duration // default 10s
	// KeepAlive is the interval of keepalive requests; a connection that answers none for three
	// intervals is dropped, which ends its trials as harness errors. Default 5s.
	KeepAlive time.Duration
}

// SSH runs trials on a Linux machine reached over SSH. Each trial is one session running the
// trial in its own session and process group (setsid); on its deadline the group, and anything
// still carrying the trial's environment marker, is killed over a second session. A lost
// connection ends the trial as a harness error; the next trial reconnects, and what the lost one
// left running is killed then.
type SSH struct {
	cfg     SSHConfig
	addr    string
	user    string
	signers []ssh.Signer        // from key files
	known   ssh.HostKeyCallback // known_hosts as parsed
	hostKey ssh.HostKeyCallback // known, with errors that say what to do
	runID   string
	seq     atomic.Int64

	mu        sync.Mutex
	client    *ssh.Client
	dir       string // per-run directory on the host
	bin       string
	useSetsid bool
	orphans   bool // a trial was cut off by a lost connection: kill its leftovers on reconnect
	closed    bool
}

// NewSSH checks the configuration (key files, known_hosts) and returns the host; it connects
// in Prepare.
func NewSSH(cfg SSHConfig) (*SSH, error) {
	if cfg.Address == "" {
		return nil, fmt.Errorf("ssh host %q: no address", cfg.Name)
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Address
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = 5 * time.Second
	}
	h := &SSH{cfg: cfg, addr: cfg.Address, user: cfg.User}
	if _, _, err := net.SplitHostPort(h.addr); err != nil {
		h.addr = net.JoinHostPort(strings.Trim(h.addr, "[]"), "22")
	}
	if h.user == "" {
		if u, err := user.Current(); err == nil {
			h.user = u.Username
		} else {
			return nil, fmt.Errorf("ssh host %s: no user given and none found: %w", cfg.Name, err)
		}
	}
	// Known hosts.
	files := cfg.KnownHosts
	if len(files) == 0 {
		if v := os.Getenv(EnvSSHKnownHosts); v != "" {
			files = filepath.SplitList(v)
		} else {
			home, _ := os.UserHomeDir()
			for _, f := range []string{filepath.Join(home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"} {
				if _, err := os.Stat(f); err == nil {
					files = append(files, f)
				}
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("ssh host %s: no known_hosts file (set %s or add the host's key to ~/.ssh/known_hosts, e.g. ssh-keyscan -p PORT HOST)", cfg.Name, EnvSSHKnownHosts)
	}
	cb, err := knownhosts.New(files...)
	if err != nil {
		return nil, fmt.Errorf("ssh host %s: known_hosts: %w", cfg.Name, err)
	}
	h.known = cb
	h.hostKey = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(hostname, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			if len(ke.Want) == 0 {
				return fmt.Errorf("host key %s %s of %s is not in %s (add it, e.g. ssh-keyscan -p PORT HOST >> known_hosts)",
					key.Type(), ssh.FingerprintSHA256(key), hostname, strings.Join(files, ", "))
			}
			return fmt.Errorf("HOST KEY MISMATCH for %s: got %s %s, known_hosts has %s:%d: refusing to connect",
				hostname, key.Type(), ssh.FingerprintSHA256(key), ke.Want[0].Filename, ke.Want[0].Line)
		}
		return err
	}
	// Key files (the agent is asked at each dial).
	keyFile := cfg.KeyFile
	if keyFile == "" {
		keyFile = os.Getenv(EnvSSHKey)
	}
	var keyFiles []string
	if keyFile != "" {
		keyFiles = []string{keyFile}
	} else {
		home, _ := os.UserHomeDir()
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if f := filepath.Join(home, ".ssh", n); fileExists(f) {
				keyFiles = append(keyFiles, f)
			}
		}
	}
	for _, f := range keyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ssh host %s: key: %w", cfg.Name, err)
		}
		s, err := ssh.ParsePrivateKey(b)
		var pe *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pe) && keyFile == "":
			continue // the agent may hold it
		case errors.As(err, &pe):
			return nil, fmt.Errorf("ssh host %s: key %s is passphrase-protected: load it into an SSH agent (ssh-add) instead", cfg.Name, f)
		case err != nil:
			return nil, fmt.Errorf("ssh host %s: key %s: %w", cfg.Name, f, err)
		}
		h.signers = append(h.signers, s)
	}
	if len(h.signers) == 0 && os.Getenv("SSH_AUTH_SOCK") == "" {
		return nil, fmt.Errorf("ssh host %s: no key: set %s to a private key file or run an SSH agent (SSH_AUTH_SOCK)", cfg.Name, EnvSSHKey)
	}
	var id [4]byte
	rand.Read(id[:])
	h.runID = hex.EncodeToString(id[:])
	return h, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Name implements Host.
func (h *SSH) Name() string { return h.cfg.Name }

// Isolation implements Host.
func (h *SSH) Isolation() string { return "process group per trial (ssh session, setsid)" }

// dial connects and authenticates.
func (h *SSH) dial(ctx context.Context) (*ssh.Client, error) {
	d := net.Dialer{Timeout: h.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", h.addr, err)
	}
	auth := []ssh.AuthMethod{}
	if len(h.signers) > 0 {
		auth = append(auth, ssh.PublicKeys(h.signers...))
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if ac, err := net.Dial("unix", sock); err == nil {
			defer ac.Close()
			auth = append(auth, ssh.PublicKeysCallback(agent.NewClient(ac).Signers))
		}
	}
	cfg := &ssh.ClientConfig{
		User:              h.user,
		Auth:              auth,
		HostKeyCallback:   h.hostKey,
		HostKeyAlgorithms: h.knownAlgorithms(conn.RemoteAddr()),
		Timeout:           h.cfg.DialTimeout,
	}
	conn.SetDeadline(time.Now().Add(h.cfg.DialTimeout))
	c, chans, reqs, err := ssh.NewClientConn(conn, h.addr, cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ssh %s@%s: %w", h.user, h.addr, err)
	}
	conn.SetDeadline(time.Time{})
	client := ssh.NewClient(c, chans, reqs)
	if h.cfg.KeepAlive > 0 {
		go keepAlive(client, h.cfg.KeepAlive)
	}
	return client, nil
}

// knownAlgorithms asks known_hosts which key types it holds for the address, so the server is
// asked for one of those (else a server preferring another type fails the check).
func (h *SSH) knownAlgorithms(remote net.Addr) []string {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	probe, _ := ssh.NewPublicKey(pub)
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
	case ssh.KeyAlgoRSA:
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	default:
		return []string{keyType}
	}
}

func keepAlive(c *ssh.Client, every time.Duration) {
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
		go func() { _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); ok <- err }()
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
func (h *SSH) conn(ctx context.Context) (*ssh.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
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
		if _, err := runOn(c, killMarked(markRun, h.runID), nil, 15*time.Second); err == nil {
			h.orphans = false
		}
	}
	return c, nil
}

// lost forgets a client whose connection failed (unless already replaced).
func (h *SSH) lost(c *ssh.Client, orphaned bool) {
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
func runOn(c *ssh.Client, cmd string, stdin io.Reader, timeout time.Duration) ([]byte, error) {
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
		return out.Bytes(), fmt.Errorf("%w: %s", err, tail(out.Bytes(), 300))
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

// Prepare implements Host: connects, makes a per-run directory, copies the binary there (SFTP,
// or `cat` where the server has no SFTP subsystem) and checks that it runs.
func (h *SSH) Prepare(ctx context.Context, localBinary string) (string, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return "", err
	}
	rs, bin, err := prepareRemote(h.cfg.Binary, localBinary, 30*time.Second,
		func(cmd string, timeout time.Duration) ([]byte, error) { return runOn(c, cmd, nil, timeout) },
		func(src, dst string) error { return upload(c, src, dst) }, h.cfg.Users)
	if err != nil {
		return "", fmt.Errorf("ssh host %s: %w", h.Name(), err)
	}
	h.mu.Lock()
	h.dir, h.useSetsid, h.bin = rs.dir, rs.setsid, bin
	h.mu.Unlock()
	return bin, nil
}

// linuxBinary picks the file to copy to a Linux host.
func linuxBinary(explicit, local string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if _, err := elfMachine(local); err == nil {
		return local, nil
	}
	if v := os.Getenv(EnvLinuxBinary); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%s is not a Linux executable: build one (GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -o sandcheck-linux ./cmd/sandcheck) and set %s", local, EnvLinuxBinary)
}

// elfMachine returns the `uname -m` name of a Linux ELF's architecture; a script (#!) passes
// with "" (any machine).
func elfMachine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err == nil && string(head) == "#!" {
		return "", nil
	}
	e, err := elf.NewFile(f)
	if err != nil {
		return "", fmt.Errorf("%s: not a Linux executable: %w", path, err)
	}
	switch e.Machine {
	case elf.EM_X86_64:
		return "x86_64", nil
	case elf.EM_AARCH64:
		return "aarch64", nil
	case elf.EM_386:
		return "i686", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return e.Machine.String(), nil
}

func upload(c *ssh.Client, src, dst string) error {
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
	_, err = runOn(c, "cat > "+shq(dst)+" && chmod 755 "+shq(dst), in, 5*time.Minute)
	return err
}

// env is what every trial gets: the pass-through variables, the configured ones, the markers.
func (h *SSH) env(trial string) []string {
	return append(trialEnv(h.cfg.Env), markRun+"="+h.runID, markTrial+"="+trial)
}

// trialEnv lists $SANDCHECK_PASSENV's variables and extra as sorted K=V.
func trialEnv(extra map[string]string) []string {
	m := map[string]string{}
	for _, k := range strings.Split(os.Getenv(EnvPassEnv), ",") {
		if k = strings.TrimSpace(k); k != "" {
			if v, ok := os.LookupEnv(k); ok {
				m[k] = v
			}
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return kv
}

// command is the remote shell line of a trial: in the run directory, a new session whose leader
// reports its pid (= the process group) on stderr and then becomes the trial.
func (h *SSH) command(argv []string, trial string) string {
	h.mu.Lock()
	dir, setsid := h.dir, h.useSetsid
	h.mu.Unlock()
	var b strings.Builder
	if dir != "" {
		b.WriteString("cd " + shq(dir) + " && ")
	}
	b.WriteString("exec ")
	if setsid {
		b.WriteString("setsid -w ")
	}
	b.WriteString("sh -c " + shq(`echo "`+pgidTag+`$$" >&2; exec "$@"`) + " sh env")
	for _, a := range append(h.env(trial), argv...) {
		b.WriteString(" " + shq(a))
	}
	return b.String()
}

// killGroup is the shell that ends a trial: TERM to its process group, KILL after 3 s, then
// KILL to anything still carrying its marker (a process that left the group).
func killGroup(pgid int, markName, markValue string) string {
	p := strconv.Itoa(pgid)
	s := ""
	if pgid > 1 {
		s = `kill -s TERM -- -` + p + ` 2>/dev/null; i=0; while kill -s 0 -- -` + p + ` 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; kill -s KILL -- -` + p + ` 2>/dev/null; `
	}
	return s + killMarked(markName, markValue)
}

// killMarked kills every process whose environment holds NAME=VALUE exactly.
func killMarked(name, value string) string {
	return `for f in $(grep -lsxzF ` + shq(name+"="+value) + ` /proc/[0-9]*/environ 2>/dev/null); do p=${f#/proc/}; kill -s KILL "${p%/environ}" 2>/dev/null; done; true`
}

// pgidWriter is a trial's stderr: it takes the first line if it is the pgid report.
type pgidWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first bool // first line consumed
	line  []byte
	pgid  int
	got   chan struct{}
}

func newPgidWriter() *pgidWriter { return &pgidWriter{got: make(chan struct{})} }

func (w *pgidWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if !w.first {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			return n, nil
		}
		w.line = append(w.line, p[:i+1]...)
		p = p[i+1:]
		w.first = true
		if s, ok := strings.CutPrefix(strings.TrimSpace(string(w.line)), strings.TrimSpace(pgidTag)); ok {
			w.pgid, _ = strconv.Atoi(strings.TrimSpace(s))
		} else {
			w.buf.Write(w.line)
		}
		close(w.got)
	}
	w.buf.Write(p)
	return n, nil
}

func (w *pgidWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := bytes.Clone(w.buf.Bytes())
	if !w.first {
		b = append(b, w.line...)
	}
	return b
}

func (w *pgidWriter) waitPgid(d time.Duration) int {
	select {
	case <-w.got:
	case <-time.After(d):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pgid
}

// Exec implements Host.
func (h *SSH) Exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	start := time.Now()
	r := h.exec(ctx, argv, timeout)
	r.Duration = time.Since(start)
	return r
}

func (h *SSH) exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	c, err := h.conn(ctx)
	if err != nil {
		return Result{Exit: -1, Err: err}
	}
	s, err := c.NewSession()
	if err != nil {
		h.lost(c, false)
		return Result{Exit: -1, Err: fmt.Errorf("open session: %w", err)}
	}
	defer s.Close()
	trial := fmt.Sprintf("%s-%d", h.runID, h.seq.Add(1))
	var stdout bytes.Buffer
	stderr := newPgidWriter()
	s.Stdout, s.Stderr = &stdout, stderr
	if err := s.Start(h.command(argv, trial)); err != nil {
		h.lost(c, false)
		return Result{Exit: -1, Err: fmt.Errorf("start: %w", err)}
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	r := Result{}
	select {
	case err = <-done:
	case <-ctx.Done():
		r.TimedOut = true
	case <-timer.C:
		r.TimedOut = true
	}
	if r.TimedOut {
		pgid := stderr.waitPgid(2 * time.Second)
		_, kerr := runOn(c, killGroup(pgid, markTrial, trial), nil, 20*time.Second)
		if pgid <= 1 {
			s.Signal(ssh.SIGKILL)
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
	var ee *ssh.ExitError
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
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.bytes()
	return r
}

// Close implements Host: kills what this run left on the host, removes the run directory and
// disconnects.
func (h *SSH) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	c, dir := h.client, h.dir
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
	cmd := killMarked(markRun, h.runID)
	if dir != "" {
		cmd += "; " + sweepUsers(dir+"/sandcheck", h.cfg.Users) + "rm -rf -- " + shq(dir)
	}
	if _, err := runOn(c, cmd, nil, 60*time.Second); err != nil {
		return fmt.Errorf("clean up %s:%s: %w", h.Name(), dir, err)
	}
	return nil
}

// shq quotes s for a POSIX shell.
func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prepareRemote is Prepare for a host reached through a shell (ssh, wsl): pick the Linux binary,
// make a private run directory, copy the binary there and check that it runs.
// setupTimeout bounds the first command (starting a WSL distribution takes longer than ssh).
func prepareRemote(explicit, local string, setupTimeout time.Duration, shell func(cmd string, timeout time.Duration) ([]byte, error),
	copyIn func(src, dst string) error, specs []string) (rs remoteSetup, bin string, err error) {
	src, err := linuxBinary(explicit, local)
	if err != nil {
		return rs, "", err
	}
	machine, err := elfMachine(src)
	if err != nil {
		return rs, "", err
	}
	out, err := shell(remoteSetupScript, setupTimeout)
	if err != nil {
		return rs, "", fmt.Errorf("probe the host: %w", err)
	}
	defer func() {
		if err != nil && rs.dir != "" {
			shell("rm -rf -- "+shq(rs.dir), time.Minute) // Prepare failed: no Close will remove it
		}
	}()
	if rs, err = parseRemoteSetup(out, src, machine); err != nil {
		return rs, "", err
	}
	bin = rs.dir + "/sandcheck"
	if err := copyIn(src, bin); err != nil {
		return rs, "", fmt.Errorf("copy %s to %s: %w", src, bin, err)
	}
	if out, err := shell(shq(bin)+" version", time.Minute); err != nil {
		return rs, "", fmt.Errorf("the copied binary does not run: %w", err)
	} else if len(bytes.TrimSpace(out)) == 0 {
		return rs, "", fmt.Errorf("the copied binary ran, but `sandcheck version` printed nothing")
	}
	err = ensureUsers(specs, func(argv []string) ([]byte, int, error) {
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = shq(a)
		}
		out, err := shell(shq(bin)+" "+strings.Join(q, " "), time.Minute)
		if err != nil {
			return out, -1, err
		}
		return out, 0, nil
	})
	return rs, bin, err
}

// remoteSetupScript runs once on a remote Linux host (ssh, wsl): what it is, a private run
// directory, and whether setsid can wait for its child (trials are then killed by session).
//
// The run directory is world-readable so that the sandbox's user (fixtures/users) can run the
// binary in it; it holds nothing else. The login's uid is reported: fixtures need root.
const remoteSetupScript = `uname -sm; echo "UID $(id -u)"; d=$(mktemp -d "${TMPDIR:-/tmp}/sandcheck-host-XXXXXXXX") && chmod 755 "$d" && echo "DIR $d"; if setsid -w true 2>/dev/null; then echo SETSID; fi`

type remoteSetup struct {
	uname, dir, uid string
	setsid          bool
}

// parseRemoteSetup reads remoteSetupScript's output and checks that the host can run the Linux
// binary src (built for machine).
func parseRemoteSetup(out []byte, src, machine string) (remoteSetup, error) {
	var rs remoteSetup
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "DIR "):
			rs.dir = strings.TrimPrefix(l, "DIR ")
		case strings.HasPrefix(l, "UID "):
			rs.uid = strings.TrimPrefix(l, "UID ")
		case l == "SETSID":
			rs.setsid = true
		case rs.uname == "":
			rs.uname = l
		}
	}
	if rs.dir == "" {
		return rs, fmt.Errorf("could not make a run directory: %s", out)
	}
	if f := strings.Fields(rs.uname); len(f) != 2 || f[0] != "Linux" || (machine != "" && f[1] != machine) {
		return rs, fmt.Errorf("host is %q; the binary %s is for Linux %s (set %s to a matching build)", rs.uname, src, machine, EnvLinuxBinary)
	}
	if rs.uid != "" && rs.uid != "0" {
		return rs, fmt.Errorf("logged in as uid %s: trials need root there for their fixtures (network namespaces, veths, private mounts); log in as root (login: root) and say who the sandbox runs as with user: (default %s, a dedicated account)", rs.uid, users.Unprivileged)
	}
	return rs, nil
}
