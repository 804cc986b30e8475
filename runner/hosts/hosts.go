// Package hosts says where a trial runs: this machine, a container, an SSH host, a WSL distro, a
// VM. Each kind is a package of its own under runner/hosts/<kind> that registers itself here, as
// targets do, with the matrix keys it reads and how to build a host from them. Every host runs
// the same thing, `sandcheck trial --emit ...`, and hands back its stdout; the trial's verdict
// travels in one framed line of that output (see trialresult), so no host needs a shared
// filesystem with the runner.
package hosts

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner"
)

// Host is one place trials run. A runner prepares it once per run, runs many trials on it
// (possibly concurrently, through NewExecutor), and closes it at the end, even after a failure
// or Ctrl-C.
type Host interface {
	Name() string
	// Prepare readies the host: copies the sandcheck binary for it (local: none), checks
	// prerequisites and the accounts the sandbox runs as, and returns the path of sandcheck
	// there.
	Prepare(ctx context.Context, localBinary string) (remoteBinary string, err error)
	// Isolation describes how trials are separated here (e.g. "process group",
	// "container per cell", "container per trial"), for reports.
	Isolation() string
	// Close removes everything Prepare and the trials created (containers, copied files,
	// connections, what the sandbox's users left). Safe to call more than once.
	Close() error
}

// Execer is a host that runs one command line at a time for the runner (every kind but local,
// whose trials the runner starts itself: see Direct).
type Execer interface {
	Host
	// Exec runs c on the host. On ctx's end or after timeout, it kills everything the trial
	// started there and returns with TimedOut set. It never returns before that is done.
	Exec(ctx context.Context, c Command, timeout time.Duration) Result
}

// Command is what Exec runs.
type Command struct {
	Argv []string
	// Stdin is all the command reads on its standard input, then end of file (nil: nothing).
	// A trial's key travels here (runner.KeyInput): argv and environment are not secret on a
	// host, where any process may read them in /proc.
	Stdin []byte
	// Stdout, when set, also gets the command's stdout as it comes: Result.Stdout may keep only
	// its end, and the executor keeps the trial's frames from all of it (runner.FrameKeeper).
	Stdout io.Writer
}

// Cmd is the Command of argv, without input.
func Cmd(argv ...string) Command { return Command{Argv: argv} }

// Direct is a host whose trials the runner starts as its own processes.
type Direct interface {
	Host
	Executor(tr Trials) runner.Executor
}

// Result is what one Exec saw.
type Result struct {
	Stdout, Stderr []byte
	Exit           int  // -1 when a signal or lost connection ended it
	TimedOut       bool // the deadline passed and the trial was killed
	// Err is harness trouble: the host could not run the trial at all (connection lost,
	// container gone). The trial then counts as harness-error, and the run goes on.
	Err      error
	Duration time.Duration
}

// Timed runs an Exec and sets its Duration.
func Timed(exec func() Result) Result {
	start := time.Now()
	r := exec()
	r.Duration = time.Since(start)
	return r
}

// Wait waits for a started command's end (done) until ctx ends or timeout passes, and says
// whether it timed out; the caller then kills what the command started and waits for done.
func Wait(ctx context.Context, done <-chan error, timeout time.Duration) (err error, timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-done:
		return err, false
	case <-ctx.Done():
	case <-timer.C:
	}
	return nil, true
}

// Options are what every host gets from the run besides its matrix entry.
type Options struct {
	// Log takes notes a user may want (cleanup after the sandbox's users, build progress);
	// nil discards them.
	Log io.Writer
}

// Kind is one host kind: its matrix keys and how to read them (matrix.HostKind), whether its
// trials see this machine's npm cache, and how to build a host.
type Kind struct {
	Name string
	matrix.HostKind
	// NpmCache: trials on this kind run sandboxes installed in this machine's npm cache, so a
	// target may choose its versions there (targets/npmcache).
	NpmCache bool
	New      func(h matrix.Host, o Options) (Host, error)
}

var (
	mu    sync.Mutex
	kinds = map[string]Kind{}
)

// Register makes a host kind available; its package calls it from init.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	kinds[k.Name] = k
}

// RegisterUnavailable registers a kind this build cannot drive, with why and what to use
// instead: a matrix naming it is refused with that reason while it is read.
func RegisterUnavailable(kind, why string) {
	Register(Kind{Name: kind, HostKind: matrix.HostKind{Unavailable: why}})
}

// Lookup returns a registered kind.
func Lookup(kind string) (Kind, bool) {
	mu.Lock()
	defer mu.Unlock()
	k, ok := kinds[kind]
	return k, ok
}

// Matrix is what the matrix needs to read hosts: every registered kind's keys and settings.
func Matrix() map[string]matrix.HostKind {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]matrix.HostKind, len(kinds))
	for n, k := range kinds {
		out[n] = k.HostKind
	}
	return out
}

// New builds the host for a matrix entry.
func New(h matrix.Host, o Options) (Host, error) {
	k, ok := Lookup(h.Kind)
	switch {
	case !ok:
		return nil, fmt.Errorf("host %q: kind %q is not available in this build (available: %s)", h.Name, h.Kind, strings.Join(Kinds(), ", "))
	case k.Unavailable != "":
		return nil, fmt.Errorf("host %q: %s", h.Name, k.Unavailable)
	}
	return k.New(h, o)
}

// Kinds lists registered host kinds.
func Kinds() []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Sorted(maps.Keys(kinds))
}
