//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock on the run directory: two runners appending to one journal
// would each skip only what they saw and run trials twice. The kernel drops the lock when the
// process dies, so a kill -9 never leaves it stale.
func Lock(dir string) (func(), error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runner: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("runner: %s is in use by another sandcheck run: %w", dir, err)
		}
		return nil, fmt.Errorf("runner: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
