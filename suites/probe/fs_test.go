package probe

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAwaitMeetsAFileMadeAfterTheStart: a check with Await asks the host for its file (the await
// mark) and waits for the host's ack before its operation, so it reads a file the host made only
// after the command started; with no ack it goes on after the limit and says so.
func TestAwaitMeetsAFileMadeAfterTheStart(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "late.key")
	mark := filepath.Join(dir, ".await-late")
	go func() {
		for {
			if _, err := os.Stat(mark); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = os.WriteFile(late, []byte("canary"), 0o644)
		_ = os.WriteFile(mark+".ack", nil, 0o644)
	}()
	r := runFS([]FSCheck{{Name: "late", Op: OpRead, Path: late, Await: mark}})[0]
	if !r.OK || r.Data != "canary" || !r.Awaited {
		t.Fatalf("late read: %+v, want the host's file after its ack", r)
	}

	defer func(d time.Duration) { awaitLimit = d }(awaitLimit)
	awaitLimit = 50 * time.Millisecond
	r = runFS([]FSCheck{{Name: "never", Op: OpRead, Path: filepath.Join(dir, "never"), Await: filepath.Join(dir, ".await-never")}})[0]
	if r.OK || r.Awaited || r.Errno != "ENOENT" {
		t.Fatalf("unanswered await: %+v, want ENOENT and no ack", r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".await-never")); err != nil {
		t.Fatalf("the await mark was not left for the host: %v", err)
	}
}
