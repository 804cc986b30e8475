//go:build linux

package process

import (
	"context"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/runner"
)

// While a trial runs, no process's command line or environment holds its key: a sandboxed
// command could read it there and frame a result of its own. The trial still gets the key.
func TestTrialKeyInNoCommandLineOrEnvironment(t *testing.T) {
	key := runner.NewKey()
	var scan keyscan.Scan
	e := &Executor{
		Command:       func(t runner.Trial, _ string) ([]string, []string, string) { return keyscan.Argv(t.Key), nil, "" },
		Parse:         scan.Parse,
		FramePrefixes: keyscan.Trials,
	}
	rec := e.Run(context.Background(), runner.Trial{Key: key, Timeout: time.Minute})
	scan.Check(t, key, rec)
}
