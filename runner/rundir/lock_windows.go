package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Lock takes an exclusive lock on the run directory's lock file (see lock_unix.go for why).
// Windows releases it when the handle closes, including when the process dies.
func Lock(dir string) (func(), error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runner: lock: %w", err)
	}
	// One byte at offset 0 is enough: every runner locks the same range.
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, 1, 0, new(windows.Overlapped))
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, fmt.Errorf("runner: %s is in use by another sandcheck run: %w", dir, err)
		}
		return nil, fmt.Errorf("runner: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
