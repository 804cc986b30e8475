// Package ssh is the ssh host kind: trials on a Linux machine reached over SSH
// (golang.org/x/crypto/ssh, known_hosts checked, key or agent auth, the binary copied over SFTP).
package ssh

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/remote"
)

// Kind is the matrix kind of ssh hosts.
const Kind = "ssh"

func init() {
	hosts.Register(hosts.Kind{Name: Kind, HostKind: matrix.HostKind{
		Keys: []string{"address", "login", "key_file", "known_hosts"},
		Settings: func(s *matrix.HostSettings) any {
			return Config{
				Address:    s.Required("address", "an address host[:port]"),
				User:       s.Optional("login", "the account to log in as"),
				KeyFile:    s.Optional("key_file", "a private key file"),
				KnownHosts: s.Strings("known_hosts", "a file or a list of files"),
			}
		},
	}, New: func(h matrix.Host, _ hosts.Options) (hosts.Host, error) {
		cfg, _ := h.Settings.(Config)
		cfg.Name, cfg.Users = h.Name, h.Users
		return New(cfg)
	}})
}

// Config describes an ssh host. Zero fields take defaults from the environment.
type Config struct {
	Name    string
	Address string // host[:port], port 22 by default
	User    string // the login (matrix login:); default: the runner's user. Must be root.
	// Users are who the sandbox runs as there (matrix user:); Prepare readies each account.
	Users []string
	// KeyFile is a private key (default: the agent at $SSH_AUTH_SOCK and
	// the usual ~/.ssh/id_* files).
	KeyFile string
	// KnownHosts files checked for the host key (default
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

// Host runs trials on a Linux machine reached over SSH. Each trial is one session running the
// trial in its own session and process group (setsid); on its deadline the group, and anything
// still carrying the trial's environment marker, is killed over a second session. A lost
// connection ends the trial as a harness error; the next trial reconnects, and what the lost one
// left running is killed then.
type Host struct {
	cfg     Config
	addr    string
	user    string
	signers []xssh.Signer        // from key files
	known   xssh.HostKeyCallback // known_hosts as parsed
	hostKey xssh.HostKeyCallback // known, with errors that say what to do
	run     *remote.Run

	mu      sync.Mutex
	client  *xssh.Client
	orphans bool // a trial was cut off by a lost connection: kill its leftovers on reconnect
}

// New checks the configuration (key files, known_hosts) and returns the host; it connects
// in Prepare.
func New(cfg Config) (*Host, error) {
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
	h := &Host{cfg: cfg, addr: cfg.Address, user: cfg.User, run: remote.NewRun()}
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
		home, _ := os.UserHomeDir()
		for _, f := range []string{filepath.Join(home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"} {
			if _, err := os.Stat(f); err == nil {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("ssh host %s: no known_hosts file (name one with known_hosts: in the matrix, or add the host's key to ~/.ssh/known_hosts, e.g. ssh-keyscan -p PORT HOST)", cfg.Name)
	}
	cb, err := knownhosts.New(files...)
	if err != nil {
		return nil, fmt.Errorf("ssh host %s: known_hosts: %w", cfg.Name, err)
	}
	h.known = cb
	h.hostKey = func(hostname string, remote net.Addr, key xssh.PublicKey) error {
		err := cb(hostname, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			if len(ke.Want) == 0 {
				return fmt.Errorf("host key %s %s of %s is not in %s (add it, e.g. ssh-keyscan -p PORT HOST >> known_hosts)",
					key.Type(), xssh.FingerprintSHA256(key), hostname, strings.Join(files, ", "))
			}
			return fmt.Errorf("HOST KEY MISMATCH for %s: got %s %s, known_hosts has %s:%d: refusing to connect",
				hostname, key.Type(), xssh.FingerprintSHA256(key), ke.Want[0].Filename, ke.Want[0].Line)
		}
		return err
	}
	// Key files (the agent is asked at each dial).
	keyFile := cfg.KeyFile
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
		s, err := xssh.ParsePrivateKey(b)
		var pe *xssh.PassphraseMissingError
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
		return nil, fmt.Errorf("ssh host %s: no key: name one with key_file: in the matrix, or run an SSH agent (SSH_AUTH_SOCK)", cfg.Name)
	}
	return h, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Name implements hosts.Host.
func (h *Host) Name() string { return h.cfg.Name }

// Isolation implements hosts.Host.
func (h *Host) Isolation() string { return "process group per trial (ssh session, setsid)" }
