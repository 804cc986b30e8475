//go:build linux

package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/images/hostrun"
)

func (b *Builder) npmDir() string { return filepath.Join(b.cacheDir(), "npm") }

// npmFlags keep npm's download cache, and the debug logs it writes beside it, under ours: a build
// leaves nothing in the caller's HOME (~/.npm/_logs got a file per npm run).
func (b *Builder) npmFlags() []string {
	return []string{"--cache=" + filepath.Join(b.npmDir(), ".npm"), "--logs-max=0", "--update-notifier=false"}
}

// NodeTarball is the cached `npm pack` of the recipe's Node package.
func (b *Builder) NodeTarball(r Recipe) string {
	return filepath.Join(b.npmDir(), fmt.Sprintf("%s-%s.tgz", r.NodePackage, r.NodeVersion))
}

// SRTModules is the cached node_modules holding the recipe's srt.
func (b *Builder) SRTModules(r Recipe) string {
	return filepath.Join(b.npmDir(), "srt-"+r.SRTVersion, "node_modules")
}

// nodeTarball fetches the Node build with `npm pack` (a tarball with package/bin/node).
func (b *Builder) nodeTarball(ctx context.Context, r Recipe) (string, error) {
	path := b.NodeTarball(r)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	unlock, err := lock(ctx, filepath.Join(b.cacheDir(), "locks", "npm.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := ensureNPM(ctx, b); err != nil {
		return "", err
	}
	tmp := filepath.Join(b.npmDir(), "tmp-pack")
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	spec := r.NodePackage + "@" + r.NodeVersion
	b.logf("npm pack %s (about 50 MB)", spec)
	if err := hostrun.Logged(ctx, filepath.Join(b.cacheDir(), "logs", "npm-pack.log"),
		"npm", append(b.npmFlags(), "pack", "--silent", "--pack-destination", tmp, spec)...); err != nil {
		return "", fmt.Errorf("images: npm pack %s: %w", spec, err)
	}
	got := filepath.Join(tmp, filepath.Base(path))
	if _, err := os.Stat(got); err != nil {
		return "", fmt.Errorf("images: npm pack %s did not produce %s", spec, filepath.Base(path))
	}
	return path, os.Rename(got, path)
}

// srtModules installs srt with npm into the cache (pure JavaScript, so the host's npm serves
// every image) and returns its node_modules.
func (b *Builder) srtModules(ctx context.Context, r Recipe) (string, error) {
	modules := b.SRTModules(r)
	if _, err := os.Stat(filepath.Join(modules, ".bin", "srt")); err == nil {
		return modules, nil
	}
	unlock, err := lock(ctx, filepath.Join(b.cacheDir(), "locks", "npm.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(modules, ".bin", "srt")); err == nil {
		return modules, nil
	}
	if err := ensureNPM(ctx, b); err != nil {
		return "", err
	}
	final := filepath.Dir(modules)
	tmp := final + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"sandcheck-image-srt","private":true}`+"\n"), 0o644); err != nil {
		return "", err
	}
	spec := r.SRTPackage + "@" + r.SRTVersion
	b.logf("npm install %s", spec)
	// --ignore-scripts: srt and its dependencies are plain JavaScript; nothing to compile.
	if err := hostrun.Logged(ctx, filepath.Join(b.cacheDir(), "logs", "npm-install.log"),
		"npm", append(b.npmFlags(), "install", "--prefix", tmp, "--no-audit", "--no-fund", "--ignore-scripts",
			"--no-package-lock", "--omit=dev", spec)...); err != nil {
		return "", fmt.Errorf("images: npm install %s: %w", spec, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "node_modules", ".bin", "srt")); err != nil {
		return "", fmt.Errorf("images: npm install %s left no node_modules/.bin/srt", spec)
	}
	os.RemoveAll(final)
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return modules, nil
}

func ensureNPM(ctx context.Context, b *Builder) error {
	if err := hostrun.EnsureTool(ctx, "npm", "npm", b.logf); err != nil {
		return fmt.Errorf("images: %w", err)
	}
	return nil
}
