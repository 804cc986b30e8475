//go:build linux

package vmimage

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/runner/hosts/vmimage/initramfs"
)

// Kernel is a Debian kernel ready to boot.
type Kernel struct {
	Suite   string   `json:"suite"`   // where it came from, e.g. bookworm
	Package string   `json:"package"` // e.g. linux-image-6.1.0-50-amd64 6.1.176-1
	Release string   `json:"release"` // uname -r
	Boot    string   `json:"boot"`    // -kernel: the uncompressed vmlinux (PVH) or the bzImage
	PVH     bool     `json:"pvh"`     // Boot is an ELF entered through PVH
	Initrd  string   `json:"initrd"`  // busybox + modules + init
	Config  string   `json:"config"`  // the kernel's build config
	Modules []string `json:"modules"` // loaded by init, in order
	BuiltIn []string `json:"builtin"` // wanted modules the kernel has built in
}

// DefaultModules are what a trial needs of a kernel that has them as modules: the root disk
// (virtio_pci, virtio_blk, ext4 and the crc32c it asks the crypto API for: a soft dependency no
// "depends=" names; from 7.x the module is crc32c_cryptoapi), the overlay root, the nonce
// (qemu_fw_cfg), fixture links (veth), the host's directories shared over virtio-9p (9p over
// 9pnet_virtio: the npm cache, a WSL-like drive). "a|b" takes the first of a and b the kernel has.
var DefaultModules = []string{"virtio_pci", "virtio_blk", "crc32c_generic|crc32c_cryptoapi", "ext4", "overlay", "qemu_fw_cfg", "veth", "9pnet_virtio", "9p"}

// Kernel returns the kernel of Debian suite (its linux-image-amd64), fetching and preparing it on
// first use.
func (b *Builder) Kernel(ctx context.Context, suite string) (*Kernel, error) {
	if suite == "" || strings.ContainsAny(suite, "/ \t") {
		return nil, fmt.Errorf("kernel suite %q: want a Debian suite such as bookworm or trixie", suite)
	}
	a := kernelArtifact(filepath.Join(b.cache(), "kernels", suite+"-"+KernelRecipe), suite)
	return a.get(b, func() (*Kernel, error) {
		start := time.Now()
		k, err := a.build(suite, func(tmp, out string) (*Kernel, error) { return b.buildKernel(ctx, suite, a.dir, tmp, out) })
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", suite, err)
		}
		b.logf("kernel %s (%s) ready in %s", suite, k.Release, time.Since(start).Round(time.Millisecond))
		return k, nil
	})
}

// kernelArtifact is the cached kernel of suite in dir.
func kernelArtifact(dir, suite string) artifact[Kernel] {
	return artifact[Kernel]{dir: dir, manifest: "kernel.json", lock: "kernel-" + suite,
		files: func(k *Kernel) []string { return []string{k.Boot, k.Initrd} }}
}

// aptEnv returns the environment of a private APT whose sources hold suite (adding it and
// updating the lists when it is new). The host's APT state is never touched.
func (b *Builder) aptEnv(ctx context.Context, suite string) ([]string, error) {
	unlock, err := b.lock("apt")
	if err != nil {
		return nil, err
	}
	defer unlock()
	root := filepath.Join(b.cache(), "apt")
	for _, d := range []string{"lists/partial", "archives/partial", "etc/parts", "etc/prefs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(root, "etc", "apt.conf")
	cfg := fmt.Sprintf(`Dir::State "%[1]s";
Dir::State::Lists "%[1]s/lists";
Dir::State::status "%[1]s/status";
Dir::Cache "%[1]s";
Dir::Cache::archives "%[1]s/archives";
Dir::Etc::SourceList "%[1]s/etc/sources.list";
Dir::Etc::SourceParts "%[1]s/etc/parts";
Dir::Etc::Preferences "%[1]s/etc/preferences";
Dir::Etc::PreferencesParts "%[1]s/etc/prefs";
APT::Architecture "amd64";
APT::Sandbox::User "root";
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
`, root)
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	os.WriteFile(filepath.Join(root, "status"), nil, 0o644)
	env := []string{"APT_CONFIG=" + conf}
	srcFile := filepath.Join(root, "etc", "sources.list")
	src, _ := os.ReadFile(srcFile)
	mirror, err := Mirror()
	if err != nil {
		return nil, err
	}
	line := fmt.Sprintf("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n", mirror, suite)
	if !bytes.Contains(src, []byte(line)) {
		if err := os.WriteFile(srcFile, append(src, line...), 0o644); err != nil {
			return nil, err
		}
		b.logf("apt-get update (private lists, adding %s)", suite)
		if _, err := run(ctx, env, "", "apt-get", "update", "-q"); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// download fetches package name from suite into dir and returns the .deb's path.
func download(ctx context.Context, env []string, dir, name, suite string) (string, error) {
	before, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
	if _, err := run(ctx, env, dir, "apt-get", "download", "-q", name+"/"+suite); err != nil {
		return "", err
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
	for _, f := range after {
		if !contains(before, f) && strings.HasPrefix(filepath.Base(f), name+"_") {
			return f, nil
		}
	}
	return "", fmt.Errorf("apt-get download %s/%s left no .deb", name, suite)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kernelDeps lists a package's dependencies that carry the kernel or its modules.
func kernelDeps(ctx context.Context, deb string) ([]string, error) {
	out, err := run(ctx, nil, "", "dpkg-deb", "-f", deb, "Depends")
	if err != nil {
		return nil, err
	}
	var deps []string
	for _, d := range strings.Split(string(out), ",") {
		name := strings.Fields(strings.TrimSpace(strings.Split(d, "|")[0]))
		if len(name) > 0 {
			// linux-base-REL (7.x) carries the kernel's config; plain linux-base is a tool.
			for _, p := range []string{"linux-image-", "linux-binary-", "linux-modules-", "linux-base-"} {
				if strings.HasPrefix(name[0], p) {
					deps = append(deps, name[0])
				}
			}
		}
	}
	return deps, nil
}

// buildKernel fetches and unpacks suite's kernel in tmp and puts what a boot needs in out (to
// be renamed to dir).
func (b *Builder) buildKernel(ctx context.Context, suite, dir, tmp, out string) (*Kernel, error) {
	env, err := b.aptEnv(ctx, suite)
	if err != nil {
		return nil, err
	}
	debs, tree := filepath.Join(tmp, "debs"), filepath.Join(tmp, "tree")
	os.MkdirAll(debs, 0o755)
	// Follow the metapackage to the packages holding the kernel and its modules (from 7.x the
	// image package is itself a metapackage over linux-binary-* and linux-modules-*).
	queue, seen := []string{"linux-image-amd64"}, map[string]bool{}
	var names []string
	for len(queue) > 0 && len(seen) < 8 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		b.logf("apt-get download %s/%s", name, suite)
		deb, err := download(ctx, env, debs, name, suite)
		if err != nil {
			return nil, err
		}
		if _, err := run(ctx, nil, "", "dpkg-deb", "-x", deb, tree); err != nil {
			return nil, err
		}
		if name != "linux-image-amd64" {
			ver, _ := run(ctx, nil, "", "dpkg-deb", "-f", deb, "Version")
			names = append(names, name+" "+strings.TrimSpace(string(ver)))
		}
		deps, err := kernelDeps(ctx, deb)
		if err != nil {
			return nil, err
		}
		queue = append(queue, deps...)
	}
	// Up to 6.x the kernel is boot/vmlinuz-REL with boot/config-REL; from 7.x it is
	// usr/lib/modules/REL/vmlinuz with .../config beside it.
	vmlinuz, _ := filepath.Glob(filepath.Join(tree, "boot", "vmlinuz-*"))
	moved, _ := filepath.Glob(filepath.Join(tree, "usr", "lib", "modules", "*", "vmlinuz"))
	vmlinuz = append(vmlinuz, moved...)
	if len(vmlinuz) != 1 {
		return nil, fmt.Errorf("want one boot/vmlinuz-* or usr/lib/modules/*/vmlinuz in %v, found %v", names, vmlinuz)
	}
	release := strings.TrimPrefix(filepath.Base(vmlinuz[0]), "vmlinuz-")
	if len(moved) == 1 {
		release = filepath.Base(filepath.Dir(moved[0]))
	}
	k := &Kernel{Suite: suite, Package: strings.Join(names, ", "), Release: release}
	config, err := os.ReadFile(filepath.Join(tree, "boot", "config-"+k.Release))
	if err != nil {
		config, _ = os.ReadFile(filepath.Join(tree, "usr", "lib", "modules", k.Release, "config"))
	}
	os.WriteFile(filepath.Join(out, "config"), config, 0o644)
	k.Config = filepath.Join(dir, "config")
	// PVH: boot the uncompressed ELF directly (no firmware, no decompression: about half the
	// boot time under TCG).
	if bytes.Contains(config, []byte("\nCONFIG_PVH=y\n")) {
		if err := extractVmlinux(ctx, vmlinuz[0], filepath.Join(out, "vmlinux")); err == nil {
			k.Boot, k.PVH = filepath.Join(dir, "vmlinux"), true
		} else {
			b.logf("kernel %s: no PVH boot (%v); booting the bzImage", k.Release, err)
		}
	}
	if k.Boot == "" {
		if err := copyFile(vmlinuz[0], filepath.Join(out, "vmlinuz")); err != nil {
			return nil, err
		}
		k.Boot = filepath.Join(dir, "vmlinuz")
	}
	// Modules.
	var modDir string
	for _, d := range []string{"lib/modules", "usr/lib/modules"} {
		if p := filepath.Join(tree, d, k.Release); isDir(p) {
			modDir = p
		}
	}
	if modDir == "" {
		return nil, fmt.Errorf("no modules for %s in %v", k.Release, names)
	}
	mods, builtin, err := initramfs.ResolveModules(ctx, modDir, DefaultModules)
	if err != nil {
		return nil, err
	}
	k.BuiltIn = builtin
	if err := initramfs.WriteBase(filepath.Join(out, "initrd.cpio"), mods); err != nil {
		return nil, err
	}
	for _, m := range mods {
		k.Modules = append(k.Modules, m.Name)
	}
	k.Initrd = filepath.Join(dir, "initrd.cpio")
	return k, nil
}

func isDir(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// extractVmlinux unpacks the ELF kernel from a bzImage's compressed payload (boot protocol
// fields setup_sects at 0x1f1, payload_offset/payload_length at 0x248; the payload ends with
// 4 bytes of decompressed size that the decompressors do not want).
func extractVmlinux(ctx context.Context, bzImage, dst string) error {
	img, err := os.ReadFile(bzImage)
	if err != nil {
		return err
	}
	if len(img) < 0x250 || string(img[0x202:0x206]) != "HdrS" {
		return errors.New("not a bzImage")
	}
	setup := int(img[0x1f1])
	if setup == 0 {
		setup = 4
	}
	off := (setup+1)*512 + int(binary.LittleEndian.Uint32(img[0x248:]))
	n := int(binary.LittleEndian.Uint32(img[0x24c:]))
	if off+n > len(img) || n < 8 {
		return errors.New("payload out of range")
	}
	payload := img[off : off+n-4]
	var tool []string
	switch {
	case bytes.HasPrefix(payload, []byte{0xFD, '7', 'z', 'X', 'Z', 0}):
		tool = []string{"xz", "-dc", "--single-stream"}
	case bytes.HasPrefix(payload, []byte{0x28, 0xB5, 0x2F, 0xFD}):
		tool = []string{"zstd", "-dcq"}
	case bytes.HasPrefix(payload, []byte{0x1F, 0x8B}):
		tool = []string{"gzip", "-dc"}
	case bytes.HasPrefix(payload, []byte{0x89, 'L', 'Z', 'O'}):
		tool = []string{"lzop", "-dc"}
	default:
		return fmt.Errorf("unknown payload compression % x", payload[:4])
	}
	c := exec.CommandContext(ctx, tool[0], tool[1:]...)
	c.Stdin = bytes.NewReader(payload)
	var out, stderr bytes.Buffer
	c.Stdout, c.Stderr = &out, &stderr
	if err := c.Run(); err != nil && out.Len() == 0 {
		return fmt.Errorf("%s: %v %s", tool[0], err, stderr.String())
	}
	if _, err := elf.NewFile(bytes.NewReader(out.Bytes())); err != nil {
		return fmt.Errorf("payload is not an ELF: %w", err)
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}
