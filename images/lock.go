//go:build linux

package images

import (
	"context"
	"fmt"
	"os"

	"github.com/sandcheck/sandcheck/internal/flock"
)

// lock takes the exclusive lock of path, waiting (until ctx ends) for another build holding it,
// in this process or another (flock.Lock).
func lock(ctx context.Context, path string) (unlock func(), err error) {
	unlock, err = flock.Lock(ctx, path, func() {
		fmt.Fprintf(os.Stderr, "images: waiting for another build holding %s\n", path)
	})
	if err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	return unlock, nil
}
