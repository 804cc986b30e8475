//go:build unix

package npmcache

import (
	"context"

	"github.com/sandcheck/sandcheck/internal/flock"
)

// lock takes the exclusive lock of path, waiting (while ctx lasts) for another install holding
// it, in this process or another (flock.Lock).
func lock(ctx context.Context, path string) (func(), error) { return flock.Lock(ctx, path, nil) }
