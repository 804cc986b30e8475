// Package remote is what the host kinds reached through a shell on another Linux system (ssh,
// wsl) or booted with sandcheck inside (vm) share: which Linux binary to copy, the run directory
// Prepare makes there and checks, the environment every trial gets, the line that starts a trial
// in a process group of its own and reports it, and the shell that kills a trial, or everything
// a run started, by process group and environment marker.
package remote

import (
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// Environment read by the remote kinds.
const (
	// EnvPassEnv is a comma-separated list of the runner's environment variables passed to
	// every trial on a remote host, e.g. SANDCHECK_SRT when that host is this machine.
	EnvPassEnv = config.PassEnv
	// EnvLinuxBinary names a sandcheck built for linux/amd64 (CGO_ENABLED=0) to copy to Linux
	// hosts when the runner itself is not one (Windows, macOS).
	EnvLinuxBinary = config.LinuxBinary
)

// Shell runs a shell line on the host and returns its output; an error for a non-zero exit.
type Shell func(cmd string, timeout time.Duration) ([]byte, error)

// Run is one run's state on a remote host: its id, which every trial carries in its
// environment (with its own) so that what it started can be found and killed even after it
// left its process group or the connection died, and what Prepare found there.
type Run struct {
	ID  string
	seq atomic.Int64

	mu     sync.Mutex
	dir    string // the run directory on the host ("" before Prepare)
	setsid bool   // setsid -w works there: trials get a session of their own
	closed bool
}

// Close marks the run closed and reports whether this call did (the host then cleans up);
// later calls report false.
func (r *Run) Close() (first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first, r.closed = !r.closed, true
	return first
}

// Closed reports whether the run is closed.
func (r *Run) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// NewRun returns a run with a fresh id.
func NewRun() *Run {
	var id [4]byte
	rand.Read(id[:])
	return &Run{ID: hex.EncodeToString(id[:])}
}

// NextTrial is the marker value of the run's next trial.
func (r *Run) NextTrial() string { return fmt.Sprintf("%s-%d", r.ID, r.seq.Add(1)) }

// Dir is the run directory on the host, "" before Prepare.
func (r *Run) Dir() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dir
}

// Prepare is Prepare for a host reached through a shell (ssh, wsl): pick the Linux binary, make
// a private run directory, copy the binary there, check that it runs and ready the accounts
// specs (see hosts.EnsureUsers). setupTimeout bounds the first command (starting a WSL
// distribution takes longer than ssh). It returns the binary's path on the host.
func (r *Run) Prepare(explicit, local string, setupTimeout time.Duration, shell Shell, copyIn func(src, dst string) error, specs []string) (bin string, err error) {
	src, err := LinuxBinary(explicit, local)
	if err != nil {
		return "", err
	}
	machine, err := ELFMachine(src)
	if err != nil {
		return "", err
	}
	out, err := shell(setupScript, setupTimeout)
	if err != nil {
		return "", fmt.Errorf("probe the host: %w", err)
	}
	rs, err := parseSetup(out, src, machine)
	if rs.dir != "" {
		defer func() {
			if err != nil {
				shell("rm -rf -- "+Shq(rs.dir), time.Minute) // Prepare failed: no Close will remove it
			}
		}()
	}
	if err != nil {
		return "", err
	}
	bin = rs.dir + "/sandcheck"
	if err := copyIn(src, bin); err != nil {
		return "", fmt.Errorf("copy %s to %s: %w", src, bin, err)
	}
	if out, err := shell(Shq(bin)+" version", time.Minute); err != nil {
		return "", fmt.Errorf("the copied binary does not run: %w", err)
	} else if len(bytes.TrimSpace(out)) == 0 {
		return "", fmt.Errorf("the copied binary ran, but `sandcheck version` printed nothing")
	}
	err = hosts.EnsureUsers(specs, func(argv []string) ([]byte, int, error) {
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = Shq(a)
		}
		out, err := shell(Shq(bin)+" "+strings.Join(q, " "), time.Minute)
		if err != nil {
			return out, -1, err
		}
		return out, 0, nil
	})
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.dir, r.setsid = rs.dir, rs.setsid
	r.mu.Unlock()
	return bin, nil
}

// setupScript runs once on a remote Linux host (ssh, wsl): what it is, a private run
// directory, and whether setsid can wait for its child (trials are then killed by session).
//
// The run directory is world-readable so that the sandbox's user (fixtures/users) can run the
// binary in it; it holds nothing else. The login's uid is reported: fixtures need root.
const setupScript = `uname -sm; echo "UID $(id -u)"; d=$(mktemp -d "${TMPDIR:-/tmp}/sandcheck-host-XXXXXXXX") && chmod 755 "$d" && echo "DIR $d"; if setsid -w true 2>/dev/null; then echo SETSID; fi`

type setup struct {
	uname, dir, uid string
	setsid          bool
}

// parseSetup reads setupScript's output and checks that the host can run the Linux binary src
// (built for machine).
func parseSetup(out []byte, src, machine string) (setup, error) {
	var rs setup
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
		return rs, fmt.Errorf("logged in as uid %s: trials need root there for their fixtures (network namespaces, veths, private mounts); log in as root (login: root) and say who the sandbox runs as with user: (default %s, a dedicated account)", rs.uid, model.UserUnprivileged)
	}
	return rs, nil
}

// LinuxBinary picks the file to copy to a Linux host: explicit, else local when it is a Linux
// executable, else $SANDCHECK_LINUX_BINARY.
func LinuxBinary(explicit, local string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if _, err := ELFMachine(local); err == nil {
		return local, nil
	}
	if v := config.Get().LinuxBinary; v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%s is not a Linux executable: build one (GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -o sandcheck-linux ./cmd/sandcheck) and set %s", local, EnvLinuxBinary)
}

// ELFMachine returns the `uname -m` name of a Linux ELF's architecture; a script (#!) passes
// with "" (any machine).
func ELFMachine(path string) (string, error) {
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

// TrialEnv lists $SANDCHECK_PASSENV's variables and extra as sorted K=V.
func TrialEnv(extra map[string]string) []string {
	m := map[string]string{}
	for _, k := range config.Get().PassEnv {
		if v, ok := os.LookupEnv(k); ok { // the named variable itself, whatever it is
			m[k] = v
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
