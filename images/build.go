//go:build linux

package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/config"
)

// DefaultCacheDir holds rootfs tarballs, npm downloads and image stamps between runs.
const DefaultCacheDir = "/var/cache/sandcheck"

// EnvCacheDir overrides DefaultCacheDir; EnvMirror names the Debian mirror debootstrap uses
// (default: the host's own apt source, debootstrap.Mirror).
const (
	EnvCacheDir = config.ImageCache
	EnvMirror   = config.DebianMirror
)

// Docker is the part of the Docker API the builder uses (client.APIClient has it).
type Docker interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (client.ImageInspectResult, error)
	ImageImport(ctx context.Context, source client.ImageImportSource, ref string, options client.ImageImportOptions) (client.ImageImportResult, error)
	ImageRemove(ctx context.Context, image string, options client.ImageRemoveOptions) (client.ImageRemoveResult, error)
}

// Builder builds and caches images. The zero value works: defaults come from the environment.
type Builder struct {
	CacheDir string    // default $SANDCHECK_IMAGE_CACHE or DefaultCacheDir
	Mirror   string    // Debian mirror URL; default $SANDCHECK_DEBIAN_MIRROR or the host's apt source
	Log      io.Writer // progress lines; default os.Stderr
	// Docker is the engine to build in; default: a client from DOCKER_HOST, closed by Close.
	Docker Docker
	own    *client.Client
}

// Result says what Ensure found or did.
type Result struct {
	Ref    string `json:"image"`
	ID     string `json:"id"`
	Recipe string `json:"recipe"`
	// Built is false when the image was already there (nothing done).
	Built bool `json:"-"`
	// RootfsCached: the debootstrap tarball came from the cache.
	RootfsCached bool `json:"rootfs_cached"`
	// Durations of the steps this call did (zero when skipped).
	Debootstrap time.Duration `json:"debootstrap_ns"`
	NPM         time.Duration `json:"npm_ns"`
	Import      time.Duration `json:"import_ns"`
	Total       time.Duration `json:"total_ns"`
	At          time.Time     `json:"at"`
}

func (b *Builder) cacheDir() string {
	if b.CacheDir != "" {
		return b.CacheDir
	}
	if d := config.Get().ImageCache; d != "" {
		return d
	}
	return DefaultCacheDir
}

func (b *Builder) log() io.Writer {
	if b.Log != nil {
		return b.Log
	}
	return os.Stderr
}

func (b *Builder) logf(format string, args ...any) {
	fmt.Fprintf(b.log(), "images: "+format+"\n", args...)
}

func (b *Builder) docker() (Docker, error) {
	if b.Docker != nil {
		return b.Docker, nil
	}
	c, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("images: docker client: %w", err)
	}
	b.Docker, b.own = c, c
	return c, nil
}

// Close releases the Docker client the builder opened itself.
func (b *Builder) Close() error {
	if own := b.own; own != nil {
		b.Docker, b.own = nil, nil
		return own.Close()
	}
	return nil
}

// Present reports whether the image of distro is in Docker with the current recipe, and its id.
func (b *Builder) Present(ctx context.Context, distro string) (id string, ok bool, err error) {
	r, err := RecipeFor(distro)
	if err != nil {
		return "", false, err
	}
	cli, err := b.docker()
	if err != nil {
		return "", false, err
	}
	return present(ctx, cli, r)
}

func present(ctx context.Context, cli Docker, r Recipe) (string, bool, error) {
	img, err := cli.ImageInspect(ctx, r.Ref())
	if cerrdefs.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("images: inspect %s: %w", r.Ref(), err)
	}
	if img.Config == nil || img.Config.Labels[LabelRecipe] != r.Hash() {
		return img.ID, false, nil
	}
	return img.ID, true, nil
}

// Ensure makes sure Docker has the image of distro built from the current recipe, building what
// the cache lacks. The first build of a distro runs debootstrap (minutes); later ones take a
// Docker API call. Concurrent callers, in this process or others, wait for one build.
func (b *Builder) Ensure(ctx context.Context, distro string) (Result, error) {
	start := time.Now()
	r, err := RecipeFor(distro)
	if err != nil {
		return Result{}, err
	}
	res := Result{Ref: r.Ref(), Recipe: r.Hash()}
	cli, err := b.docker()
	if err != nil {
		return res, err
	}
	if id, ok, err := present(ctx, cli, r); err != nil {
		return res, err
	} else if ok {
		res.ID = id
		b.writeStampIfMissing(distro, res)
		return res, nil
	}

	unlock, err := lock(ctx, filepath.Join(b.cacheDir(), "locks", distro+".lock"))
	if err != nil {
		return res, err
	}
	defer unlock()
	// Another builder may have finished while this one waited.
	stale, ok, err := present(ctx, cli, r)
	if err != nil {
		return res, err
	} else if ok {
		res.ID = stale
		b.writeStampIfMissing(distro, res)
		return res, nil
	}

	b.logf("building %s (recipe %s) under %s", r.Ref(), r.Hash(), b.cacheDir())
	t := time.Now()
	rootfs, cached, err := b.rootfs(ctx, r)
	if err != nil {
		return res, err
	}
	res.RootfsCached = cached
	if !cached {
		res.Debootstrap = time.Since(t)
	}
	t = time.Now()
	node, err := b.nodeTarball(ctx, r)
	if err != nil {
		return res, err
	}
	modules, err := b.srtModules(ctx, r)
	if err != nil {
		return res, err
	}
	res.NPM = time.Since(t)
	t = time.Now()
	id, err := importImage(ctx, cli, r, rootfs, node, modules)
	if err != nil {
		return res, err
	}
	res.Import = time.Since(t)
	if _, ok, err := present(ctx, cli, r); err != nil || !ok {
		return res, fmt.Errorf("images: %s imported as %s but does not carry recipe %s (%v)", r.Ref(), id, r.Hash(), err)
	}
	if stale != "" && stale != id {
		// The previous recipe's image lost its tag; drop it unless a container still uses it.
		_, _ = cli.ImageRemove(ctx, stale, client.ImageRemoveOptions{PruneChildren: true})
	}
	res.ID, res.Built, res.Total, res.At = id, true, time.Since(start), time.Now().UTC()
	if err := b.writeStamp(distro, res); err != nil {
		return res, err
	}
	b.logf("built %s = %s in %s (debootstrap %s%s, npm %s, import %s)", r.Ref(), shortID(id),
		res.Total.Round(time.Second), res.Debootstrap.Round(time.Second), cachedNote(cached),
		res.NPM.Round(time.Second), res.Import.Round(time.Second))
	return res, nil
}

func cachedNote(cached bool) string {
	if cached {
		return ", rootfs cached"
	}
	return ""
}

func shortID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}

// StampFile is where Ensure records the image it built for distro.
func (b *Builder) StampFile(distro string) string {
	return filepath.Join(b.cacheDir(), "images", distro+".json")
}

// Stamp reads the record of the last build of distro.
func (b *Builder) Stamp(distro string) (Result, error) {
	var r Result
	data, err := os.ReadFile(b.StampFile(distro))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(data, &r)
}

func (b *Builder) writeStamp(distro string, r Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(b.StampFile(distro), append(data, '\n'))
}

func (b *Builder) writeStampIfMissing(distro string, r Result) {
	if s, err := b.Stamp(distro); err == nil && s.ID == r.ID && s.Recipe == r.Recipe {
		return
	}
	r.At = time.Now().UTC()
	_ = b.writeStamp(distro, r) // a stamp is a record, not a requirement
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
