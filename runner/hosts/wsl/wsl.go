// Package wsl is the wsl host kind: trials in a WSL distribution, driven from Windows through
// wsl.exe (tested here against a stand-in, testdata/wslstub: no Windows machine exists here).
package wsl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/remote"
)

// Environment read by the wsl driver.
const (
	// EnvWSLExe is the wsl.exe to drive (default: wsl.exe on PATH). Tests point it at the
	// stand-in in testdata/wslstub.
	EnvWSLExe = config.WSLExe
)

// Cold-start modes.
const (
	ColdNone  = ""
	ColdFirst = "first"
	ColdEvery = "every"
)

// Kind is the matrix kind of wsl hosts.
const Kind = "wsl"

func init() {
	hosts.Register(hosts.Kind{Name: Kind, HostKind: matrix.HostKind{
		Keys: []string{"distro", "login", "cold_start"},
		Settings: func(s *matrix.HostSettings) any {
			return Config{
				Distro: s.Required("distro", "a WSL distribution name"),
				User:   s.Optional("login", "the Linux account trials start as in the distribution"),
				Cold:   s.OneOf("cold_start", ColdFirst, ColdEvery),
			}
		},
	}, New: func(h matrix.Host, _ hosts.Options) (hosts.Host, error) {
		cfg, _ := h.Settings.(Config)
		cfg.Name, cfg.Users = h.Name, h.Users
		return New(cfg)
	}})
}

// Config describes a WSL distribution driven from Windows through wsl.exe.
type Config struct {
	Name   string
	Distro string
	User   string // the login (matrix login:); default root, which it must be.
	// Users are who the sandbox runs as in the distribution (matrix user:); Prepare readies each.
	Users []string
	Exe   string // default $SANDCHECK_WSL_EXE, else wsl.exe
	// Root is where the distribution's files appear to the runner: on Windows `\\wsl$\DISTRO`
	// (the default there). Empty elsewhere: the binary is then streamed through wsl.exe's stdin.
	Root string
	Cold string            // ColdNone, ColdFirst or ColdEvery
	Env  map[string]string // set for every trial (after $SANDCHECK_PASSENV's variables)
	// Binary is the Linux sandcheck to copy (default: Prepare's argument when it is a Linux
	// executable, else $SANDCHECK_LINUX_BINARY).
	Binary string
}

// Host runs trials in a WSL distribution from the Windows side: every trial is
// `wsl.exe -d DISTRO -u USER --cd RUNDIR -e setsid -w sh -c ...`, which reports the trial's
// process group first; on the deadline a second wsl.exe kills that group inside the
// distribution (killing wsl.exe alone would leave the Linux processes running), then wsl.exe.
type Host struct {
	cfg  Config
	run  *remote.Run
	cold sync.Mutex // serializes trials when every trial starts cold

	mu       sync.Mutex
	coldDone bool
}

// New returns the host; Prepare talks to wsl.exe.
func New(cfg Config) (*Host, error) {
	if cfg.Distro == "" {
		return nil, fmt.Errorf("wsl host %q: no distro", cfg.Name)
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Distro
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if cfg.Exe == "" {
		cfg.Exe = config.Get().WSLExe
	}
	if cfg.Exe == "" {
		cfg.Exe = "wsl.exe"
	}
	if cfg.Root == "" && runtime.GOOS == "windows" {
		cfg.Root = `\\wsl$\` + cfg.Distro
	}
	switch cfg.Cold {
	case ColdNone, ColdFirst, ColdEvery:
	default:
		return nil, fmt.Errorf("wsl host %s: cold start %q: want %q, %q or empty", cfg.Name, cfg.Cold, ColdFirst, ColdEvery)
	}
	return &Host{cfg: cfg, run: remote.NewRun()}, nil
}

// Name implements hosts.Host.
func (w *Host) Name() string { return w.cfg.Name }

// Isolation implements hosts.Host.
func (w *Host) Isolation() string {
	switch w.cfg.Cold {
	case ColdEvery:
		return "process group per trial (wsl.exe), WSL VM shut down before every trial"
	case ColdFirst:
		return "process group per trial (wsl.exe), WSL VM shut down before the first trial"
	}
	return "process group per trial (wsl.exe)"
}

// wslRun is one wsl.exe invocation's outcome.
type wslRun struct {
	stdout, stderr []byte
	exit           int
	err            error // could not start, or wsl.exe itself failed (see launchFailed)
}

// wslExitFailed reports wsl.exe's own failure code: -1, i.e. 0xFFFFFFFF on Windows and 255
// where an exit status has 8 bits.
func wslExitFailed(code int) bool { return code == -1 || code == 255 || code == 0xFFFFFFFF }

// args builds wsl.exe's argv for a Linux command line.
func (w *Host) args(cd string, argv ...string) []string {
	a := []string{"-d", w.cfg.Distro, "-u", w.cfg.User}
	if cd != "" {
		a = append(a, "--cd", cd)
	}
	return append(append(a, "-e"), argv...)
}

func (w *Host) cmd(ctx context.Context, args []string) *exec.Cmd {
	c := exec.CommandContext(ctx, w.cfg.Exe, args...)
	// WSL_UTF8=1 makes wsl.exe print its own messages in UTF-8 (else UTF-16LE, decoded below).
	c.Env = append(os.Environ(), "WSL_UTF8=1")
	return c
}

// invoke runs wsl.exe to completion (bounded by timeout) and decodes its output.
func (w *Host) invoke(args []string, stdin io.Reader, timeout time.Duration) wslRun {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := w.cmd(ctx, args)
	var stdout, stderr bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = stdin, &stdout, &stderr
	err := c.Run()
	r := wslRun{stdout: DecodeWSLOutput(stdout.Bytes()), stderr: DecodeWSLOutput(stderr.Bytes())}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.exit, r.err = -1, fmt.Errorf("wsl.exe %s: no answer in %s", strings.Join(args, " "), timeout)
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	case err != nil:
		r.exit, r.err = -1, fmt.Errorf("wsl.exe: %w", err)
	}
	return r
}

// shell runs a shell line in the distribution and fails on a non-zero exit.
func (w *Host) shell(script string, stdin io.Reader, timeout time.Duration) ([]byte, error) {
	r := w.invoke(w.args("", "sh", "-c", script), stdin, timeout)
	if r.err != nil {
		return nil, r.err
	}
	if r.exit != 0 {
		return r.stdout, fmt.Errorf("wsl.exe -d %s (exit %d): %s", w.cfg.Distro, r.exit, strings.TrimSpace(string(r.stderr)+" "+string(r.stdout)))
	}
	return r.stdout, nil
}

// Shutdown runs `wsl.exe --shutdown`, stopping every distribution and the WSL VM.
func (w *Host) Shutdown() error {
	r := w.invoke([]string{"--shutdown"}, nil, 2*time.Minute)
	if r.err == nil && r.exit != 0 {
		r.err = fmt.Errorf("wsl.exe --shutdown (exit %d): %s", r.exit, strings.TrimSpace(string(r.stderr)+string(r.stdout)))
	}
	return r.err
}

// Prepare implements hosts.Host: a run directory in the distribution, the binary copied there (through
// \\wsl$\DISTRO on Windows, else through wsl.exe's stdin), and checked to run.
func (w *Host) Prepare(_ context.Context, localBinary string) (string, error) {
	bin, err := w.run.Prepare(w.cfg.Binary, localBinary, 3*time.Minute,
		func(cmd string, timeout time.Duration) ([]byte, error) { return w.shell(cmd, nil, timeout) },
		w.copyIn, w.cfg.Users)
	if err != nil {
		return "", fmt.Errorf("wsl host %s: %w", w.Name(), err)
	}
	return bin, nil
}

// WindowsPath is where a Linux path of the distribution appears to the runner (\\wsl$\DISTRO\...).
func (w *Host) WindowsPath(linux string) string {
	if w.cfg.Root == "" {
		return ""
	}
	return filepath.Join(w.cfg.Root, filepath.FromSlash(linux))
}

func (w *Host) copyIn(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if p := w.WindowsPath(dst); p != "" {
		out, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		_, err = w.shell("chmod 755 "+remote.Shq(dst), nil, time.Minute)
		return err
	}
	_, err = w.shell("cat > "+remote.Shq(dst)+" && chmod 755 "+remote.Shq(dst), in, 5*time.Minute)
	return err
}

var _ hosts.Execer = (*Host)(nil)

// Exec implements hosts.Execer; the command's input goes through wsl.exe's stdin.
func (w *Host) Exec(ctx context.Context, cmd hosts.Command, timeout time.Duration) hosts.Result {
	start := time.Now()
	if w.cfg.Cold != ColdNone {
		if w.cfg.Cold == ColdEvery {
			w.cold.Lock() // a shutdown would kill the other trials
			defer w.cold.Unlock()
		}
		w.mu.Lock()
		shut := w.cfg.Cold == ColdEvery || !w.coldDone
		w.coldDone = true
		w.mu.Unlock()
		if shut {
			if err := w.Shutdown(); err != nil {
				return hosts.Result{Exit: -1, Err: err, Duration: time.Since(start)}
			}
		}
	}
	r := w.exec(ctx, cmd, timeout)
	r.Duration = time.Since(start)
	return r
}

func (w *Host) exec(ctx context.Context, cmd hosts.Command, timeout time.Duration) hosts.Result {
	if w.run.Closed() {
		return hosts.Result{Exit: -1, Err: errors.New("host closed")}
	}
	trial := w.run.NextTrial()
	line := w.run.TrialLine(trial, remote.TrialEnv(w.cfg.Env), cmd.Argv)
	c := w.cmd(context.Background(), w.args(w.run.Dir(), line...)) // the deadline is handled below
	var stdout bytes.Buffer
	stderr := remote.NewPgidWriter()
	c.Stdout, c.Stderr = &stdout, stderr
	if cmd.Stdout != nil {
		c.Stdout = io.MultiWriter(&stdout, cmd.Stdout)
	}
	if cmd.Stdin != nil {
		c.Stdin = bytes.NewReader(cmd.Stdin)
	}
	if err := c.Start(); err != nil {
		return hosts.Result{Exit: -1, Err: fmt.Errorf("start %s: %w", w.cfg.Exe, err)}
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	r := hosts.Result{}
	err, timedOut := hosts.Wait(ctx, done, timeout)
	r.TimedOut = timedOut
	if r.TimedOut {
		// Inside first: killing wsl.exe does not reach the Linux processes.
		pgid := stderr.WaitPgid(2 * time.Second)
		if _, kerr := w.shell(remote.KillTrial(pgid, trial), nil, time.Minute); kerr != nil {
			r.Err = fmt.Errorf("deadline passed; killing the trial inside %s failed: %v", w.cfg.Distro, kerr)
		}
		c.Process.Kill()
		err = <-done
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	default:
		r.Exit = -1
	}
	r.Stdout, r.Stderr = DecodeWSLOutput(stdout.Bytes()), DecodeWSLOutput(stderr.Bytes())
	started := stderr.WaitPgid(0) > 0
	if !r.TimedOut && !started && (err != nil && ee == nil || wslExitFailed(r.Exit)) {
		// The Linux side never started: wsl.exe itself failed (unknown distro, WSL broken).
		r.Err = fmt.Errorf("wsl.exe -d %s failed (exit %d): %s", w.cfg.Distro, r.Exit, strings.TrimSpace(string(r.Stderr)+" "+string(r.Stdout)))
	}
	return r
}

// Close implements hosts.Host: kills what the run left in the distribution and removes its directory.
func (w *Host) Close() error {
	if !w.run.Close() {
		return nil
	}
	script := w.run.CloseScript(w.cfg.Users)
	if script == "" {
		return nil
	}
	_, err := w.shell(script, nil, time.Minute)
	return err
}

// DecodeWSLOutput returns b as UTF-8: wsl.exe writes its own messages (errors, --list) in
// UTF-16LE unless WSL_UTF8=1 is honoured (older builds ignore it). Text that is not UTF-16LE is
// returned as it is; CRLF becomes LF in decoded text.
func DecodeWSLOutput(b []byte) []byte {
	if !looksUTF16LE(b) {
		return b
	}
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		b = b[2:]
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	s := string(utf16.Decode(u))
	return []byte(strings.ReplaceAll(s, "\r\n", "\n"))
}

// looksUTF16LE: a BOM, or an even length where nearly every odd byte is 0 (ASCII-range text) and
// no even byte is: UTF-8 text never holds NUL bytes.
func looksUTF16LE(b []byte) bool {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		return true
	}
	if len(b) < 2 || len(b)%2 != 0 {
		return false
	}
	zeroOdd := 0
	for i := 0; i < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return false
		}
		if b[i+1] == 0 {
			zeroOdd++
		}
	}
	return zeroOdd*10 >= len(b)/2*9
}
