//go:build unix

package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A second locker waits while the first holds the lock, gives up when its context ends, and
// gets the lock once the first lets go.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "x.lock")
	unlock, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while the first is held: %v, want the context's end", err)
	}
	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), path, func() { close(waiting) })
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case <-waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the second locker never found the lock held")
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lock after unlock")
	}
}
