//go:build linux

package vmimage

// A kernel whose release says it is something else: how a Debian kernel carries WSL's marker.
//
// /proc/version is not a file the kernel keeps: fs/proc/version.c formats it on every read from
// the reader's UTS namespace (sysname, release, version), and `uname -r` reads the same release.
// A bind mount over /proc/version would show the marker too, but bubblewrap mounts a fresh proc
// inside its sandbox and the kernel refuses that when a mount covers part of the outer proc
// ("Can't mount proc"). Changing the release at its source avoids both: the initial UTS
// namespace (init_uts_ns, six 65-byte fields: sysname, nodename, release, version, machine,
// domainname) is data in the kernel image, so a copy of the image with the release field
// rewritten boots a kernel that says the new release everywhere, in every proc, to everyone.
// Nothing else reads it: modules are checked against the build's vermagic, not the release.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const utsField = 65 // __NEW_UTS_LEN + 1

// utsHead is how init_uts_ns begins: sysname "Linux" and nodename "(none)", each NUL-padded.
var utsHead = append(pad("Linux"), pad("(none)")...)

func pad(s string) []byte {
	b := make([]byte, utsField)
	copy(b, s)
	return b
}

// releaseSites finds every copy of init_uts_ns in a kernel image (6.x kernels hold two: the
// namespace and the build's own record) and returns the offsets of their release fields and the
// release they hold, which must agree.
func releaseSites(img []byte) ([]int, string, error) {
	var sites []int
	var release string
	for off := 0; ; {
		i := bytes.Index(img[off:], utsHead)
		if i < 0 {
			break
		}
		at := off + i + len(utsHead)
		off = at
		if at+utsField > len(img) {
			break
		}
		field := img[at : at+utsField]
		n := bytes.IndexByte(field, 0)
		if n <= 0 || !printable(field[:n]) || !allZero(field[n:]) {
			continue
		}
		r := string(field[:n])
		if release != "" && r != release {
			return nil, "", fmt.Errorf("two UTS releases in the image: %q and %q", release, r)
		}
		release = r
		sites = append(sites, at)
	}
	if len(sites) == 0 {
		return nil, "", errors.New("no UTS namespace (\"Linux\", \"(none)\", release) in the image: not an uncompressed kernel")
	}
	return sites, release, nil
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// PatchRelease writes to dst a copy of the uncompressed kernel image src whose release is its
// own followed by suffix, and returns the new release.
func PatchRelease(src, dst, suffix string) (string, error) {
	img, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	sites, release, err := releaseSites(img)
	if err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	patched := release + suffix
	if len(patched) >= utsField || !printable([]byte(patched)) {
		return "", fmt.Errorf("%s: release %q: longer than %d characters or not printable", src, patched, utsField-1)
	}
	for _, at := range sites {
		copy(img[at:at+utsField], pad(patched))
	}
	if err := os.WriteFile(dst, img, 0o644); err != nil {
		return "", err
	}
	return patched, nil
}

// KernelWithRelease is suite's kernel (Kernel) booting a copy of its image whose release ends
// in suffix, built once next to the kernel. The initramfs and modules are the kernel's own.
func (b *Builder) KernelWithRelease(ctx context.Context, suite, suffix string) (*Kernel, error) {
	k, err := b.Kernel(ctx, suite)
	if err != nil {
		return nil, err
	}
	if suffix == "" {
		return k, nil
	}
	if !k.PVH {
		return nil, fmt.Errorf("kernel %s: its release can be changed only in an uncompressed (PVH) image, and this one boots compressed", k.Release)
	}
	name := "vmlinux" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '+' {
			return r
		}
		return '_'
	}, suffix)
	dst := filepath.Join(filepath.Dir(k.Boot), name)
	marked := *k
	marked.Boot, marked.Release = dst, k.Release+suffix
	if img, err := os.ReadFile(dst); err == nil {
		if _, rel, err := releaseSites(img); err == nil && rel == marked.Release {
			return &marked, nil
		}
	}
	unlock, err := b.lock("kernel-" + suite)
	if err != nil {
		return nil, err
	}
	defer unlock()
	tmp := dst + ".tmp"
	if _, err := PatchRelease(k.Boot, tmp, suffix); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("kernel %s: %w", suite, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, err
	}
	b.logf("kernel %s: release %s in %s", suite, marked.Release, dst)
	return &marked, nil
}
