// Package npmcache installs published versions of npm-distributed sandboxes (srt, codex) once
// each, into a cache shared by every run on the machine and by the container hosts that mount it:
//
//	DIR/<package>@<version>/node_modules/...   one `npm install --prefix` per version, never global
//	DIR/<package>@<version>/.sandcheck-install.json   written last: an install without it is not used
//	DIR/.index/<package>.json                  the registry's version list and dist-tags, with its age
//	DIR/.locks/, DIR/.tmp/, DIR/.logs/         flock files, installs in progress, npm's output
//
// (DIR is /var/cache/sandcheck/npm, or $SANDCHECK_NPM_CACHE.) An install runs in a temporary
// directory beside the cache and is renamed into place only once npm succeeded and the package's
// own manifest says the requested version, so a killed install is never mistaken for a complete
// one; a per-version lock makes concurrent runs wait for one install instead of racing. The
// version list is fetched at most once per process and reused from disk for a TTL, and a stale
// copy serves when the registry cannot be reached.
package npmcache

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/versions"
)

// Defaults.
const (
	DefaultDir = "/var/cache/sandcheck/npm"
	DefaultTTL = 6 * time.Hour
	// EnvDir overrides the cache directory; EnvTTL the version list's freshness (a duration);
	// EnvOffline=1 never asks the registry for version lists (installed versions still serve).
	EnvDir     = config.NpmCache
	EnvTTL     = config.NpmTTL
	EnvOffline = config.NpmOffline
)

// MarkerFile is written into an install last; its presence makes the install complete.
const MarkerFile = ".sandcheck-install.json"

// Cache is one cache directory. The zero value is usable (DefaultDir or $SANDCHECK_NPM_CACHE,
// npm from PATH, DefaultTTL); share one Cache per process so version lists are fetched once.
type Cache struct {
	Dir     string        // default $SANDCHECK_NPM_CACHE, else DefaultDir
	NPM     string        // the npm executable; default "npm" on PATH
	TTL     time.Duration // how long a fetched version list is fresh; default $SANDCHECK_NPM_TTL or DefaultTTL
	Offline bool          // never fetch version lists (also $SANDCHECK_NPM_OFFLINE=1)
	Log     io.Writer     // one line per install and fetch; nil = silent
	Now     func() time.Time

	mu       sync.Mutex
	index    map[string]Index // package -> list, resolved once per process
	installs atomic.Int64
	fetches  atomic.Int64
}

// New returns a Cache configured from the environment.
func New() *Cache {
	env := config.Get()
	c := &Cache{Offline: env.NpmOffline}
	if d, err := time.ParseDuration(env.NpmTTL); err == nil && d > 0 {
		c.TTL = d
	}
	return c
}

func (c *Cache) dir() string {
	if c.Dir != "" {
		return c.Dir
	}
	if d := config.Get().NpmCache; d != "" {
		return d
	}
	return DefaultDir
}

// Root is the cache directory in use.
func (c *Cache) Root() string { return c.dir() }

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultTTL
}

func (c *Cache) npm() string {
	if c.NPM != "" {
		return c.NPM
	}
	return "npm"
}

func (c *Cache) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "npm cache: "+format+"\n", args...)
	}
}

// Installs is how many npm installs this Cache ran (not counting versions already cached).
func (c *Cache) Installs() int { return int(c.installs.Load()) }

// Fetches is how many version lists this Cache asked the registry for.
func (c *Cache) Fetches() int { return int(c.fetches.Load()) }

// Spec is one package version to install.
type Spec struct {
	Package string // npm name, e.g. @anthropic-ai/sandbox-runtime
	Version string // exact, e.g. 0.0.60
	// Bin is the executable the install must provide (node_modules/.bin/BIN).
	Bin string
	// IgnoreScripts installs without running lifecycle scripts (pure-JavaScript packages).
	IgnoreScripts bool
}

func (s Spec) String() string { return s.Package + "@" + s.Version }

func (s Spec) check() error {
	if !validPackage(s.Package) {
		return fmt.Errorf("npm cache: %q is not an npm package name", s.Package)
	}
	v, err := versions.Parse(s.Version)
	if err != nil || v.String() != s.Version || strings.ContainsAny(s.Version, "/\\ ") {
		return fmt.Errorf("npm cache: %s: want an exact version like 0.0.60, got %q", s.Package, s.Version)
	}
	return nil
}

// Install is one installed version.
type Install struct {
	Spec
	Dir   string        // DIR/<package>@<version>
	Fresh bool          // installed by this call (false: it was in the cache)
	Took  time.Duration // the npm install's wall time, when Fresh
}

// BinPath is the executable the package provides, e.g. .../node_modules/.bin/srt.
func (i Install) BinPath() string { return filepath.Join(i.Dir, "node_modules", ".bin", i.Bin) }

// marker is MarkerFile's content.
type marker struct {
	Package     string    `json:"package"`
	Version     string    `json:"version"`
	InstalledAt time.Time `json:"installed_at"`
	Seconds     float64   `json:"seconds"`
	NPM         string    `json:"npm,omitempty"`
}

// Path is where a version is (or would be) installed.
func (c *Cache) Path(pkg, version string) string {
	return filepath.Join(c.dir(), filepath.FromSlash(pkg)+"@"+version)
}

// Lookup returns the install of s if the cache holds a complete one.
func (c *Cache) Lookup(s Spec) (Install, bool) {
	if s.check() != nil {
		return Install{}, false
	}
	in := Install{Spec: s, Dir: c.Path(s.Package, s.Version)}
	return in, complete(in) == nil
}

// complete checks an install: its marker names the spec, the package's own manifest says the
// version, and the executable is there.
func complete(in Install) error {
	b, err := os.ReadFile(filepath.Join(in.Dir, MarkerFile))
	if err != nil {
		return fmt.Errorf("no %s (an interrupted install?)", MarkerFile)
	}
	var m marker
	if json.Unmarshal(b, &m) != nil || m.Package != in.Package || m.Version != in.Version {
		return fmt.Errorf("%s does not name %s", MarkerFile, in.Spec)
	}
	return verify(in.Dir, in.Spec)
}

// verify checks what npm left in dir: the package at the version asked, and its executable.
func verify(dir string, s Spec) error {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package), "package.json"))
	if err != nil {
		return fmt.Errorf("no node_modules/%s/package.json", s.Package)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("node_modules/%s/package.json: %w", s.Package, err)
	}
	if pkg.Name != s.Package || pkg.Version != s.Version {
		return fmt.Errorf("node_modules holds %s@%s, not %s", pkg.Name, pkg.Version, s)
	}
	if s.Bin != "" {
		if st, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", s.Bin)); err != nil || st.IsDir() {
			return fmt.Errorf("no node_modules/.bin/%s", s.Bin)
		}
	}
	return nil
}

// Install returns the cached install of s, installing it first if the cache has no complete one.
// Concurrent callers (goroutines or processes) for the same version wait for one install.
func (c *Cache) Install(ctx context.Context, s Spec) (Install, error) {
	if err := s.check(); err != nil {
		return Install{}, err
	}
	if in, ok := c.Lookup(s); ok {
		return in, nil
	}
	base := filepath.FromSlash(s.Package) + "@" + s.Version
	flat := strings.ReplaceAll(s.Package, "/", "+") + "@" + s.Version
	unlock, err := lock(ctx, filepath.Join(c.dir(), ".locks", flat+".lock"))
	if err != nil {
		return Install{}, fmt.Errorf("npm cache: %s: %w", s, err)
	}
	defer unlock()
	in := Install{Spec: s, Dir: c.Path(s.Package, s.Version)}
	if complete(in) == nil {
		return in, nil // another process installed it while we waited
	}
	// What is there is incomplete (killed mid-rename, or hand-made): never use it.
	if _, err := os.Lstat(in.Dir); err == nil {
		why := complete(in)
		c.logf("%s: removing an incomplete install (%v)", s, why)
		if err := os.RemoveAll(in.Dir); err != nil {
			return Install{}, fmt.Errorf("npm cache: remove incomplete %s: %w", in.Dir, err)
		}
	}
	tmpRoot := filepath.Join(c.dir(), ".tmp")
	// Leftovers of killed installs of this version: nobody else touches them while we hold the lock.
	if old, _ := filepath.Glob(filepath.Join(tmpRoot, flat+".*")); len(old) > 0 {
		for _, o := range old {
			os.RemoveAll(o)
		}
	}
	if err := os.MkdirAll(tmpRoot, 0o755); err != nil {
		return Install{}, fmt.Errorf("npm cache: %w", err)
	}
	tmp := filepath.Join(tmpRoot, flat+"."+randomHex(4))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return Install{}, fmt.Errorf("npm cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	// A manifest of its own keeps npm from walking up to some parent project.
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"sandcheck-npm-cache","private":true}`+"\n"), 0o644); err != nil {
		return Install{}, fmt.Errorf("npm cache: %w", err)
	}
	args := []string{"install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-package-lock", "--omit=dev", "--loglevel=error"}
	if s.IgnoreScripts {
		args = append(args, "--ignore-scripts")
	}
	args = append(args, s.String())
	c.logf("installing %s into %s", s, in.Dir)
	start := c.now()
	out, err := c.run(ctx, args...)
	took := c.now().Sub(start)
	logFile := filepath.Join(c.dir(), ".logs", flat+".log")
	if os.MkdirAll(filepath.Dir(logFile), 0o755) == nil {
		os.WriteFile(logFile, out, 0o644)
	}
	if err != nil {
		return Install{}, fmt.Errorf("npm cache: npm install %s: %w: %s", s, err, tail(out, 600))
	}
	if err := verify(tmp, s); err != nil {
		return Install{}, fmt.Errorf("npm cache: npm install %s succeeded but %v (log: %s)", s, err, logFile)
	}
	m, _ := json.MarshalIndent(marker{Package: s.Package, Version: s.Version, InstalledAt: c.now().UTC(), Seconds: took.Seconds(), NPM: c.npm()}, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, MarkerFile), append(m, '\n'), 0o644); err != nil {
		return Install{}, fmt.Errorf("npm cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(in.Dir), 0o755); err != nil {
		return Install{}, fmt.Errorf("npm cache: %w", err)
	}
	if err := os.Rename(tmp, in.Dir); err != nil {
		return Install{}, fmt.Errorf("npm cache: move %s into place: %w", base, err)
	}
	c.installs.Add(1)
	in.Fresh, in.Took = true, took
	c.logf("installed %s in %.1fs", s, took.Seconds())
	return in, nil
}

// run runs npm with args; output combined.
func (c *Cache) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.npm(), args...)
	// npm's own download cache goes under ours, and it writes no debug logs: an install leaves
	// nothing in the caller's HOME (~/.npm/_logs held one file per install before).
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false",
		"npm_config_cache="+filepath.Join(c.dir(), ".npm"), "npm_config_logs_max=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		err = fmt.Errorf("%w (install Node and npm: apt-get install npm)", err)
	}
	return out.Bytes(), err
}

// Size is the bytes the cache's installs take (files and directories, not following links).
func (c *Cache) Size() (int64, error) {
	var n int64
	err := filepath.WalkDir(c.dir(), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// validPackage accepts npm names: name or @scope/name, lower-case letters, digits, - . _ ~.
func validPackage(s string) bool {
	name := s
	if strings.HasPrefix(s, "@") {
		scope, rest, ok := strings.Cut(s[1:], "/")
		if !ok || !validPart(scope) {
			return false
		}
		name = rest
	}
	return validPart(name)
}

func validPart(s string) bool {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_', r == '~':
		default:
			return false
		}
	}
	return true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
