//go:build linux

// Package debootstrap makes a Debian root filesystem as a tarball: `debootstrap
// --variant=minbase` with a list of packages from the release's own archive, apt's downloads and
// lists dropped, packed with numeric owners and extended attributes. It needs root.
//
// A killed debootstrap leaves proc, sys and dev/pts mounted in its work directory; the next run
// unmounts them before it removes the directory, since removing through a live mount would reach
// the host's own files.
package debootstrap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/images/hostrun"
	"github.com/sandcheck/sandcheck/internal/procfs"
)

// Spec is one root filesystem to make.
type Spec struct {
	Distro   string   // the release, e.g. bookworm
	Packages []string // installed on top of minbase
	Mirror   string   // the archive; "" = Mirror()
	Work     string   // scratch directory, removed before and after
	LogDir   string   // DISTRO-debootstrap.log and DISTRO-tar.log
	Logf     func(format string, args ...any)
}

// Tarball makes the root filesystem of s into out (written beside it, then renamed).
func Tarball(ctx context.Context, s Spec, out string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("building the %s rootfs needs root (debootstrap); run as root or with sudo", s.Distro)
	}
	if err := hostrun.EnsureTool(ctx, "debootstrap", "debootstrap", s.Logf); err != nil {
		return err
	}
	if err := removeTree(s.Work); err != nil { // what a killed build left
		return err
	}
	if err := os.MkdirAll(s.Work, 0o755); err != nil {
		return err
	}
	defer removeTree(s.Work)

	mirror := s.Mirror
	if mirror == "" {
		mirror = Mirror()
	}
	args := []string{"--variant=minbase", "--components=main",
		"--include=" + strings.Join(s.Packages, ","), s.Distro, s.Work}
	if mirror != "" {
		args = append(args, mirror)
	}
	logFile := filepath.Join(s.LogDir, s.Distro+"-debootstrap.log")
	s.Logf("debootstrap %s (%s) into %s: a few minutes; log in %s", s.Distro, strings.Join(s.Packages, " "), s.Work, logFile)
	if err := hostrun.Logged(ctx, logFile, "debootstrap", args...); err != nil {
		return fmt.Errorf("debootstrap %s: %w", s.Distro, err)
	}
	// The image needs neither downloaded .debs nor package lists (apt update refetches them).
	for _, pat := range []string{"var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*_*"} {
		matches, _ := filepath.Glob(filepath.Join(s.Work, pat))
		for _, m := range matches {
			os.Remove(m)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	os.Remove(tmp)
	tarLog := filepath.Join(s.LogDir, s.Distro+"-tar.log")
	if err := hostrun.Logged(ctx, tarLog, "tar", "--numeric-owner", "--xattrs", "--xattrs-include=*",
		"-C", s.Work, "-cf", tmp, "."); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("tar the %s rootfs: %w", s.Distro, err)
	}
	return os.Rename(tmp, out)
}

// Mirror is the mirror debootstrap uses: $SANDCHECK_DEBIAN_MIRROR, else the first Debian
// archive among this host's own apt sources, else "" (debootstrap's default).
func Mirror() string {
	if m := config.Get().DebianMirror; m != "" {
		return m
	}
	var texts []string
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	for _, f := range append(append([]string{"/etc/apt/sources.list"}, files...), lists...) {
		if b, err := os.ReadFile(f); err == nil {
			texts = append(texts, string(b))
		}
	}
	return mirrorFrom(texts)
}

// mirrorFrom picks the first URI ending in /debian (not -security, -ports, ...) from apt source
// texts in one-line (deb URI SUITE ...) or deb822 (URIs: ...) format.
func mirrorFrom(texts []string) string {
	for _, text := range texts {
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			var uris []string
			if v, ok := strings.CutPrefix(line, "URIs:"); ok {
				uris = strings.Fields(v)
			} else if f := strings.Fields(line); len(f) >= 3 && f[0] == "deb" {
				for _, x := range f[1:] {
					if strings.HasPrefix(x, "[") || strings.HasSuffix(x, "]") || strings.Contains(x, "=") {
						continue // [arch=... signed-by=...] options
					}
					uris = append(uris, x)
					break
				}
			}
			for _, u := range uris {
				if strings.HasSuffix(strings.TrimSuffix(u, "/"), "/debian") &&
					(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "file:/")) {
					return strings.TrimSuffix(u, "/")
				}
			}
		}
	}
	return ""
}

// removeTree removes a debootstrap work directory, first unmounting whatever a killed
// debootstrap left mounted inside it (proc, sys, dev/pts): removing through a live mount would
// reach the host's own files.
func removeTree(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		mounts := mountsUnder(abs)
		if len(mounts) == 0 {
			break
		}
		if attempt == 5 {
			return fmt.Errorf("cannot unmount %v under %s; remove it by hand", mounts, abs)
		}
		for _, m := range mounts {
			unix.Unmount(m, unix.MNT_DETACH)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return os.RemoveAll(abs)
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 5 {
			continue
		}
		mp := procfs.UnescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}
