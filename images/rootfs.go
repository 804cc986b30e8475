//go:build linux

package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/images/debootstrap"
)

// RootfsFile is the cached debootstrap tarball of a recipe.
func (b *Builder) RootfsFile(r Recipe) string {
	return filepath.Join(b.cacheDir(), "rootfs", r.Distro+"-"+r.rootfsKey()+".tar")
}

// rootfs returns the recipe's rootfs tarball, running debootstrap when the cache lacks it.
// The caller holds the distro's lock.
func (b *Builder) rootfs(ctx context.Context, r Recipe) (path string, cached bool, err error) {
	path = b.RootfsFile(r)
	if _, err := os.Stat(path); err == nil {
		return path, true, nil
	}
	err = debootstrap.Tarball(ctx, debootstrap.Spec{
		Distro: r.Distro, Packages: r.Packages, Mirror: b.Mirror,
		Work:   filepath.Join(b.cacheDir(), "work", r.Distro),
		LogDir: filepath.Join(b.cacheDir(), "logs"),
		Logf:   b.logf,
	}, path)
	if err != nil {
		return "", false, fmt.Errorf("images: %w", err)
	}
	return path, false, nil
}
