//go:build linux

package vmimage

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// fakeImage is kernel-like bytes holding init_uts_ns twice, as 6.x images do.
func fakeImage(release string) []byte {
	uts := func(version string) []byte {
		var b []byte
		for _, f := range []string{"Linux", "(none)", release, version, "x86_64", "(none)"} {
			b = append(b, pad(f)...)
		}
		return b
	}
	img := append([]byte("\x7fELF...code...Linux version "+release+" (debian-kernel@lists.debian.org)\x00"), uts("# SMP")...)
	img = append(img, bytes.Repeat([]byte{0xcc}, 100)...)
	return append(img, uts("#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1")...)
}

func TestPatchReleaseRewritesEveryUTSRelease(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "vmlinux"), filepath.Join(dir, "vmlinux-wsl2")
	orig := fakeImage("6.1.0-50-amd64")
	os.WriteFile(src, orig, 0o644)
	rel, err := PatchRelease(src, dst, "-microsoft-standard-WSL2")
	if err != nil || rel != "6.1.0-50-amd64-microsoft-standard-WSL2" {
		t.Fatalf("PatchRelease: %q %v", rel, err)
	}
	got, _ := os.ReadFile(dst)
	if len(got) != len(orig) {
		t.Fatalf("size changed: %d -> %d", len(orig), len(got))
	}
	sites, r, err := releaseSites(got)
	if err != nil || len(sites) != 2 || r != rel {
		t.Fatalf("patched image: %v %q %v", sites, r, err)
	}
	// Only the release fields changed: the banner text and the version fields are as they were.
	if !bytes.Contains(got, []byte("Linux version 6.1.0-50-amd64 (debian")) || !bytes.Contains(got, pad("#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1")) {
		t.Fatal("more than the release changed")
	}
	if src, _ := os.ReadFile(src); !bytes.Equal(src, orig) {
		t.Fatal("the source image changed")
	}
}

func TestPatchReleaseRefusesWhatItCannotDo(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		img    []byte
		suffix string
		want   string
	}{
		"compressed":    {[]byte("\x1f\x8b not a kernel"), "-x", "not an uncompressed kernel"},
		"too long":      {fakeImage("6.1.0-50-amd64"), "-" + strings.Repeat("x", 60), "longer than 64"},
		"two releases":  {append(fakeImage("6.1.0-50-amd64"), fakeImage("6.1.0-51-amd64")...), "-x", "two UTS releases"},
		"not printable": {fakeImage("6.1.0-50-amd64"), "-\n", "not printable"},
	} {
		src := filepath.Join(dir, name)
		os.WriteFile(src, c.img, 0o644)
		if _, err := PatchRelease(src, src+".out", c.suffix); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// On a real Debian kernel the layout is found: bookworm's, fetched into the cache as a vm host
// would (once; the vm tests share it), and any other cached kernel.
func TestReleaseSitesInDebianKernels(t *testing.T) {
	skip.Short(t, "fetches a Debian kernel on first use")
	skip.UnlessRoot(t, "the kernel cache is "+DefaultCache)
	var log strings.Builder
	fetched, err := (&Builder{Log: &log}).Kernel(t.Context(), "bookworm")
	if err != nil {
		t.Fatalf("bookworm kernel: %v\n%s", err, log.String())
	}
	if !fetched.PVH {
		t.Fatalf("bookworm kernel %s has no uncompressed PVH image to look into: %+v", fetched.Release, fetched)
	}
	ks, _ := filepath.Glob(filepath.Join(DefaultCache, "kernels", "*", "kernel.json"))
	checked := map[string]bool{}
	for _, kj := range ks {
		k, err := kernelArtifact(filepath.Dir(kj), "").load()
		if err != nil || !k.PVH {
			continue // a kernel being built, or one booted from its bzImage
		}
		img, err := os.ReadFile(k.Boot)
		if err != nil {
			t.Fatal(err)
		}
		sites, rel, err := releaseSites(img)
		if err != nil || rel != k.Release {
			t.Errorf("%s: %v %q (want %q) %v", k.Boot, sites, rel, k.Release, err)
		}
		checked[k.Boot] = true
	}
	if !checked[fetched.Boot] {
		t.Errorf("the fetched kernel %s is not among the cached ones %v", fetched.Boot, ks)
	}
}
