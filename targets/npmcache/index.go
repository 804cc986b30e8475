package npmcache

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/versions"
)

// Index is a package's published versions as this run sees them, and where they came from.
type Index struct {
	versions.Published
	FetchedAt time.Time `json:"fetched_at"`
	// Source says how fresh the list is: "registry" (fetched now), "cache" (fetched within the
	// TTL) or "stale cache" (the registry could not be asked; Warning says why).
	Source  string `json:"-"`
	Warning string `json:"-"`
}

// Age is how long ago the list was fetched.
func (x Index) Age(now time.Time) time.Duration { return now.Sub(x.FetchedAt) }

// Published returns pkg's version list: the one this Cache already read, else the cache file if
// younger than the TTL, else the registry's (saved for the next run), else a stale cache file
// with a warning. Offline never asks the registry.
func (c *Cache) Published(ctx context.Context, pkg string) (Index, error) {
	if !validPackage(pkg) {
		return Index{}, fmt.Errorf("npm cache: %q is not an npm package name", pkg)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if x, ok := c.index[pkg]; ok {
		return x, nil
	}
	file := filepath.Join(c.dir(), ".index", strings.ReplaceAll(pkg, "/", "+")+".json")
	disk, diskErr := readIndex(file, pkg)
	var x Index
	switch {
	case diskErr == nil && (c.Offline || disk.Age(c.now()) < c.ttl()):
		x = disk
		x.Source = "cache"
	case c.Offline:
		return Index{}, fmt.Errorf("npm cache: offline, and no saved version list of %s (%v)", pkg, diskErr)
	default:
		fetched, err := c.fetch(ctx, pkg)
		switch {
		case err == nil:
			x = fetched
			x.Source = "registry"
			if err := writeIndex(file, x); err != nil {
				c.logf("could not save the version list of %s: %v", pkg, err)
			}
		case diskErr == nil:
			x = disk
			x.Source = "stale cache"
			x.Warning = fmt.Sprintf("using the version list of %s saved %s ago: the registry did not answer (%v)",
				pkg, disk.Age(c.now()).Round(time.Minute), err)
			c.logf("%s", x.Warning)
		default:
			return Index{}, err
		}
	}
	if c.index == nil {
		c.index = map[string]Index{}
	}
	c.index[pkg] = x
	return x, nil
}

// fetch asks npm for the versions and dist-tags.
func (c *Cache) fetch(ctx context.Context, pkg string) (Index, error) {
	c.fetches.Add(1)
	c.logf("fetching the version list of %s", pkg)
	out, err := c.run(ctx, "view", pkg, "versions", "dist-tags", "--json")
	if err != nil {
		return Index{}, fmt.Errorf("npm cache: npm view %s: %w: %s", pkg, err, tail(out, 400))
	}
	var raw struct {
		Versions json.RawMessage   `json:"versions"`
		Tags     map[string]string `json:"dist-tags"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return Index{}, fmt.Errorf("npm cache: npm view %s: unreadable answer: %w: %s", pkg, err, tail(out, 200))
	}
	x := Index{Published: versions.Published{Package: pkg, Tags: raw.Tags}, FetchedAt: c.now().UTC()}
	// npm prints a lone version as a string, several as a list.
	if err := json.Unmarshal(raw.Versions, &x.Versions); err != nil {
		var one string
		if json.Unmarshal(raw.Versions, &one) != nil || one == "" {
			return Index{}, fmt.Errorf("npm cache: npm view %s: no versions in %s", pkg, tail(out, 200))
		}
		x.Versions = []string{one}
	}
	if len(x.Versions) == 0 {
		return Index{}, fmt.Errorf("npm cache: %s has no published versions", pkg)
	}
	return x, nil
}

func readIndex(file, pkg string) (Index, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Index{}, err
	}
	var x Index
	if err := json.Unmarshal(b, &x); err != nil || x.Package != pkg || len(x.Versions) == 0 || x.FetchedAt.IsZero() {
		return Index{}, fmt.Errorf("%s: not a saved version list of %s", file, pkg)
	}
	return x, nil
}

// writeIndex saves atomically (a reader never sees half a file).
func writeIndex(file string, x Index) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	tmp := file + "." + randomHex(4)
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
