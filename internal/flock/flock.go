//go:build unix

// Package flock takes exclusive file locks that wait for another holder while a context lasts,
// for caches that several processes fill at once (container images, npm installs). The kernel
// drops a lock when its holder dies, so a killed build or install never leaves one stale.
// Standard library and x/sys only.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// poll is how often a waiter tries again: flock has no waiting form that a context can end.
const poll = 100 * time.Millisecond

// Lock takes an exclusive flock on path (made, with its directory, if missing), waiting while ctx
// lasts for another holder, in this process or another. waiting, when not nil, is called once
// when the lock is found held.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if waiting != nil {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(poll):
		}
	}
}
