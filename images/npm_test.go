//go:build linux

package images

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestNPMLeavesHomeAlone: fetching an image's node and installing its srt into an empty cache
// writes nothing into the caller's HOME: npm's download cache and its debug logs (one file per
// run in ~/.npm/_logs, which a fresh machine's leftover check blamed on the tests) stay under the
// image cache.
func TestNPMLeavesHomeAlone(t *testing.T) {
	skip.Short(t, "downloads node (about 50 MB) and srt into an empty cache")
	skip.UnlessTools(t, "apt-get install npm", "npm")
	r, err := RecipeFor(Distros[0])
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	b := &Builder{CacheDir: t.TempDir(), Log: os.Stderr}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := b.nodeTarball(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := b.srtModules(ctx, r); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if p != home {
			t.Errorf("left in HOME: %s", p)
		}
		return nil
	})
}
