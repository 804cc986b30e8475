//go:build linux

package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockWaiting says that a build waits for another's lock (tests watch for it).
var lockWaiting = func(path string) {
	fmt.Fprintf(os.Stderr, "images: waiting for another build holding %s\n", path)
}

// lock takes an exclusive flock on path, waiting (until ctx ends) for another holder, in this
// process or another. The kernel drops the lock when its holder dies, so a killed build never
// wedges the next one.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("images: lock dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("images: lock: %w", err)
	}
	waited := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("images: lock %s: %w", path, err)
		}
		if !waited {
			lockWaiting(path)
			waited = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("images: waiting for %s: %w", path, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
