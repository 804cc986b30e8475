//go:build linux

package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

func TestRecipes(t *testing.T) {
	hashes := map[string]string{}
	for _, d := range Distros {
		r, err := RecipeFor(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ref() != "sandcheck/debian:"+d {
			t.Errorf("Ref(%s) = %s", d, r.Ref())
		}
		if got, ok := DistroOf(r.Ref()); !ok || got != d {
			t.Errorf("DistroOf(%s) = %q, %v", r.Ref(), got, ok)
		}
		h := r.Hash()
		if len(h) != 12 || hashes[h] != "" {
			t.Errorf("hash of %s = %q (seen for %q)", d, h, hashes[h])
		}
		hashes[h] = d
		again, _ := RecipeFor(d)
		if again.Hash() != h {
			t.Errorf("hash of %s is not stable", d)
		}
		// A new srt or Node changes the image, not the debootstrap tarball.
		newer := r
		newer.SRTVersion, newer.NodeVersion = "9.9.9", "99.0.0"
		if newer.Hash() == h || newer.rootfsKey() != r.rootfsKey() {
			t.Errorf("%s: srt/Node versions must change the image hash only", d)
		}
		more := r
		more.Packages = append(slices.Clone(r.Packages), "strace")
		if more.rootfsKey() == r.rootfsKey() {
			t.Errorf("%s: the package list must change the rootfs key", d)
		}
	}
	for _, bad := range []string{"jessie", "", "sandcheck/debian:jessie", "debian:bookworm"} {
		if _, err := RecipeFor(bad); err == nil {
			t.Errorf("RecipeFor(%q) succeeded", bad)
		}
		if _, ok := DistroOf(bad); ok {
			t.Errorf("DistroOf(%q) claimed it", bad)
		}
	}
}

// fakeInputs makes a Node tarball and an srt node_modules like npm's.
func fakeInputs(t *testing.T) (nodeTgz, modules string) {
	t.Helper()
	dir := t.TempDir()
	nodeTgz = filepath.Join(dir, "node.tgz")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"package/LICENSE": "MIT", "package/bin/node": "#!/bin/sh\necho v22\n"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(nodeTgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	modules = filepath.Join(dir, "srt", "node_modules")
	cli := filepath.Join(modules, "@anthropic-ai", "sandbox-runtime", "dist", "cli.js")
	os.MkdirAll(filepath.Dir(cli), 0o755)
	os.WriteFile(cli, []byte("#!/usr/bin/env node\n"), 0o755)
	os.MkdirAll(filepath.Join(modules, ".bin"), 0o755)
	if err := os.Symlink("../@anthropic-ai/sandbox-runtime/dist/cli.js", filepath.Join(modules, ".bin", "srt")); err != nil {
		t.Fatal(err)
	}
	return nodeTgz, modules
}

func TestImageTar(t *testing.T) {
	r, _ := RecipeFor("bookworm")
	nodeTgz, modules := fakeInputs(t)
	names, err := overlayNames(r, nodeTgz, modules)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{NodeBin, SRTPath, "/usr/local/bin/node", "/usr/local/bin/srt", BinDir + "/", TmpDir + "/",
		"/etc/apt/apt.conf.d/99sandcheck", Root + "/recipe.json"} {
		if !slices.Contains(names, want) {
			t.Errorf("overlay lacks %s; has %v", want, names)
		}
	}

	// The whole image: the rootfs entries, then the overlay, with contents and link targets kept.
	rootfs := filepath.Join(t.TempDir(), "rootfs.tar")
	var rb bytes.Buffer
	tw := tar.NewWriter(&rb)
	tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "./etc/debian_version", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3})
	tw.Write([]byte("12\n"))
	tw.Close()
	os.WriteFile(rootfs, rb.Bytes(), 0o644)
	var img bytes.Buffer
	if err := writeImageTar(&img, r, rootfs, nodeTgz, modules); err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	body := map[string]string{}
	tr := tar.NewReader(&img)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h
		b, _ := io.ReadAll(tr)
		body[h.Name] = string(b)
	}
	if body["./etc/debian_version"] != "12\n" {
		t.Errorf("rootfs file lost: %q", body["./etc/debian_version"])
	}
	if body["."+NodeBin] != "#!/bin/sh\necho v22\n" || got["."+NodeBin].Mode&0o111 == 0 {
		t.Errorf("node binary: %q mode %o", body["."+NodeBin], got["."+NodeBin].Mode)
	}
	if h := got["."+SRTPath]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "../@anthropic-ai/sandbox-runtime/dist/cli.js" {
		t.Errorf("srt link: %+v", h)
	}
	if body["./etc/apt/apt.conf.d/99sandcheck"] != AptConf {
		t.Errorf("apt config %q", body["./etc/apt/apt.conf.d/99sandcheck"])
	}
	if h := got["."+TmpDir+"/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("TMPDIR entry %+v, want mode 1777", h)
	}
}

// TestEnsure needs a Docker engine (scripts/start-dockerd.sh starts one): every distro's image is
// built if missing (the first time: debootstrap, about a minute each), and a second Ensure does
// nothing and takes one API call.
func TestEnsure(t *testing.T) {
	skip.UnlessRoot(t, "building images (debootstrap, dockerd)")
	script, _ := filepath.Abs("../scripts/start-dockerd.sh")
	if out, err := exec.Command(script).CombinedOutput(); err != nil {
		skip.Missing(t, "no Docker engine can run here (scripts/start-dockerd.sh: %v):\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var log bytes.Buffer
	b := &Builder{Log: &log}
	defer b.Close()
	for _, d := range Distros {
		first, err := b.Ensure(ctx, d)
		if err != nil {
			t.Fatalf("%s: %v\n%s", d, err, log.String())
		}
		if first.Built {
			t.Logf("%s: built in %s (debootstrap %s, rootfs cached %v, npm %s, import %s)", d, first.Total.Round(time.Second),
				first.Debootstrap.Round(time.Second), first.RootfsCached, first.NPM.Round(time.Second), first.Import.Round(time.Second))
		}
		t0 := time.Now()
		again, err := b.Ensure(ctx, d)
		took := time.Since(t0)
		if err != nil || again.Built || again.ID != first.ID {
			t.Fatalf("%s: second Ensure = %+v, %v; want the same image, nothing built", d, again, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: a warm Ensure took %s", d, took)
		}
		stamp, err := b.Stamp(d)
		if err != nil || stamp.ID != first.ID || stamp.Recipe != first.Recipe {
			t.Errorf("%s: stamp %+v, %v; want image %s recipe %s", d, stamp, err, first.ID, first.Recipe)
		}
		if _, err := os.Stat(b.RootfsFile(mustRecipe(t, d))); err != nil {
			t.Errorf("%s: rootfs tarball not cached: %v", d, err)
		}
	}
}

func mustRecipe(t *testing.T, d string) Recipe {
	t.Helper()
	r, err := RecipeFor(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
