// Package hosts says where a trial runs: this machine, a container, an SSH host, a WSL distro, a
// VM. Every host runs the same thing, `sandcheck trial --emit ...`, and hands back its stdout;
// the trial's verdict travels in one framed line of that output (see trialresult), so no host
// needs a shared filesystem with the runner.
package hosts

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
)

// Host is one place trials run. A runner prepares it once per run, executes many trials on it
// (possibly concurrently), and closes it at the end, even after a failure or Ctrl-C.
type Host interface {
	Name() string
	// Prepare readies the host: copies the sandcheck binary for it (local: none), checks
	// prerequisites, and returns the path of sandcheck there.
	Prepare(ctx context.Context, localBinary string) (remoteBinary string, err error)
	// Exec runs argv on the host. On ctx's end or after timeout, it kills everything the trial
	// started there and returns with TimedOut set. It never returns before that is done.
	Exec(ctx context.Context, argv []string, timeout time.Duration) Result
	// Isolation describes how trials are separated here (e.g. "process group",
	// "container per cell", "container per trial"), for reports.
	Isolation() string
	// Close removes everything Prepare and Exec created (containers, copied files,
	// connections). Safe to call more than once.
	Close() error
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

// Factory builds a host from its matrix entry.
type Factory func(h matrix.Host) (Host, error)

var (
	mu        sync.Mutex
	factories = map[string]Factory{}
)

// Register makes a host kind available; drivers call it from init.
func Register(kind string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	factories[kind] = f
}

// New builds the host for a matrix entry.
func New(h matrix.Host) (Host, error) {
	mu.Lock()
	f := factories[h.Kind]
	mu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("host %q: kind %q is not available in this build (available: %s)", h.Name, h.Kind, strings.Join(Kinds(), ", "))
	}
	return f(h)
}

// Kinds lists registered host kinds.
func Kinds() []string {
	mu.Lock()
	defer mu.Unlock()
	var k []string
	for x := range factories {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
