//go:build linux

package hostrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/testwait"
)

// The log holds the command line and its output; a failure carries the log's tail.
func TestLoggedKeepsTheLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "logs", "x.log")
	if err := Logged(context.Background(), log, "sh", "-c", "echo out; echo err >&2"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	if got := string(b); !strings.HasPrefix(got, "# sh -c echo out; echo err >&2\n") || !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") {
		t.Fatalf("log = %q", got)
	}
	err := Logged(context.Background(), log, "sh", "-c", "echo the-cause; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "the-cause") {
		t.Fatalf("failure = %v, want the exit status and the log's tail", err)
	}
}

// The context's end kills the command's whole process group, not only its leader.
func TestLoggedKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Logged(ctx, filepath.Join(dir, "x.log"), "sh", "-c", "sleep 300 & echo $! > "+pidFile+"; wait")
	}()
	child := testwait.Pids(t, pidFile, 1, 10*time.Second)
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("canceled run = %v", err)
	}
	testwait.Gone(t, 10*time.Second, child...)
}

func TestEnsureToolPresent(t *testing.T) {
	said := false
	if err := EnsureTool(context.Background(), "sh", "dash", func(string, ...any) { said = true }); err != nil || said {
		t.Fatalf("a present tool: err %v, installed %v", err, said)
	}
}
