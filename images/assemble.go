//go:build linux

package images

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// importImage streams the rootfs tarball plus the overlay (Node, srt, apt config) into
// `docker import`, tagged r.Ref(), and returns the image id.
func importImage(ctx context.Context, cli Docker, r Recipe, rootfs, nodeTgz, srtModules string) (string, error) {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeImageTar(pw, r, rootfs, nodeTgz, srtModules))
	}()
	defer pr.Close()
	changes := []string{
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"ENV SANDCHECK_SRT=" + SRTPath,
		"LABEL " + LabelRecipe + "=" + r.Hash(),
		"LABEL " + LabelDistro + "=" + r.Distro,
		`CMD ["sleep", "infinity"]`,
	}
	resp, err := cli.ImageImport(ctx, client.ImageImportSource{Source: pr, SourceName: "-"}, r.Ref(),
		client.ImageImportOptions{Message: "sandcheck images recipe " + r.Hash(), Changes: changes})
	if err != nil {
		return "", fmt.Errorf("images: docker import %s: %w", r.Ref(), err)
	}
	defer resp.Close()
	if err := readJSONStream(resp); err != nil {
		return "", fmt.Errorf("images: docker import %s: %w", r.Ref(), err)
	}
	img, err := cli.ImageInspect(ctx, r.Ref())
	if err != nil {
		return "", fmt.Errorf("images: inspect %s after import: %w", r.Ref(), err)
	}
	return img.ID, nil
}

// readJSONStream drains Docker's progress stream, returning the first error it reports.
func readJSONStream(rd io.Reader) error {
	dec := json.NewDecoder(rd)
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
		if m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
	}
}

// writeImageTar writes the whole image filesystem: every entry of the rootfs tarball, then the
// overlay under /opt/sandcheck and its links.
func writeImageTar(w io.Writer, r Recipe, rootfs, nodeTgz, srtModules string) error {
	tw := tar.NewWriter(w)
	f, err := os.Open(rootfs)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", rootfs, err)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if err := writeOverlay(tw, r, nodeTgz, srtModules); err != nil {
		return err
	}
	return tw.Close()
}

// writeOverlay adds what is not from Debian: Node, srt, the apt config, the directories the
// container host uses, and a record of the recipe.
func writeOverlay(tw *tar.Writer, r Recipe, nodeTgz, srtModules string) error {
	now := time.Unix(0, 0)
	dir := func(p string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "." + p + "/", Mode: 0o755, ModTime: now})
	}
	file := func(p string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "." + p, Mode: mode, Size: int64(len(data)), ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	link := func(p, target string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "." + p, Linkname: target, Mode: 0o777, ModTime: now})
	}
	for _, d := range []string{Root, Root + "/node", Root + "/node/bin", SRTDir, BinDir} {
		if err := dir(d); err != nil {
			return err
		}
	}
	// Trials' TMPDIR, sticky and world-writable like /tmp (the rootfs has /var/tmp).
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "." + TmpDir + "/", Mode: 0o1777, ModTime: now}); err != nil {
		return err
	}
	if err := copyNode(tw, nodeTgz, "."+NodeBin, now); err != nil {
		return err
	}
	if err := copyTree(tw, srtModules, "."+SRTDir+"/node_modules"); err != nil {
		return err
	}
	recipe, _ := json.MarshalIndent(struct {
		Recipe
		Hash string `json:"hash"`
	}{r, r.Hash()}, "", "  ")
	if err := file(Root+"/recipe.json", 0o644, append(recipe, '\n')); err != nil {
		return err
	}
	if err := file("/etc/apt/apt.conf.d/99sandcheck", 0o644, []byte(r.AptConf)); err != nil {
		return err
	}
	if err := link("/usr/local/bin/node", NodeBin); err != nil {
		return err
	}
	return link("/usr/local/bin/srt", SRTPath)
}

// copyNode copies package/bin/node out of the npm tarball.
func copyNode(tw *tar.Writer, tgz, name string, mtime time.Time) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s holds no package/bin/node", tgz)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tgz, err)
		}
		if path.Clean(h.Name) != "package/bin/node" || h.Typeflag != tar.TypeReg {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: h.Size, ModTime: mtime}); err != nil {
			return err
		}
		_, err = io.Copy(tw, tr)
		return err
	}
}

// copyTree copies a directory tree (files, directories, symlinks) under prefix, owned by root.
func copyTree(tw *tar.Writer, src, prefix string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := prefix
		if rel != "." {
			name = prefix + "/" + filepath.ToSlash(rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, ModTime: info.ModTime(), Mode: int64(info.Mode().Perm())}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) {
				return fmt.Errorf("%s links outside the tree (%s)", p, target)
			}
			h.Typeflag, h.Linkname = tar.TypeSymlink, target
		case info.Mode().IsRegular():
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
		default:
			return nil // sockets, fifos: nothing an npm package needs
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(tw, f)
		if err == nil && n != h.Size {
			err = fmt.Errorf("%s changed size while copied", p)
		}
		return err
	})
}

// overlayNames lists the overlay's entry names (for tests).
func overlayNames(r Recipe, nodeTgz, srtModules string) ([]string, error) {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := writeOverlay(tw, r, nodeTgz, srtModules)
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	var names []string
	tr := tar.NewReader(pr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		names = append(names, strings.TrimPrefix(h.Name, "."))
	}
}
