//go:build linux

package images

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/internal/procfs"
)

// RootfsFile is the cached debootstrap tarball of a recipe.
func (b *Builder) RootfsFile(r Recipe) string {
	return filepath.Join(b.cacheDir(), "rootfs", r.Distro+"-"+r.rootfsKey()+".tar")
}

// rootfs returns the recipe's rootfs tarball, running debootstrap when the cache lacks it.
// The caller holds the distro's lock.
func (b *Builder) rootfs(ctx context.Context, r Recipe) (path string, cached bool, err error) {
	path = b.RootfsFile(r)
	if _, err := os.Stat(path); err == nil {
		return path, true, nil
	}
	if os.Geteuid() != 0 {
		return "", false, fmt.Errorf("images: building the %s rootfs needs root (debootstrap); run as root or with sudo", r.Distro)
	}
	if err := ensureTool(ctx, "debootstrap", "debootstrap", b.log()); err != nil {
		return "", false, err
	}
	work := filepath.Join(b.cacheDir(), "work", r.Distro)
	if err := removeTree(work); err != nil { // what a killed build left
		return "", false, err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", false, err
	}
	defer removeTree(work)

	mirror := b.Mirror
	if mirror == "" {
		mirror = DebianMirror()
	}
	args := []string{"--variant=minbase", "--components=main",
		"--include=" + strings.Join(r.Packages, ","), r.Distro, work}
	if mirror != "" {
		args = append(args, mirror)
	}
	logFile := filepath.Join(b.cacheDir(), "logs", r.Distro+"-debootstrap.log")
	b.logf("debootstrap %s (%s) into %s: a few minutes; log in %s", r.Distro, strings.Join(r.Packages, " "), work, logFile)
	if err := runLogged(ctx, logFile, "debootstrap", args...); err != nil {
		return "", false, fmt.Errorf("images: debootstrap %s: %w", r.Distro, err)
	}
	// The image needs neither downloaded .debs nor package lists (apt update refetches them).
	for _, pat := range []string{"var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*_*"} {
		matches, _ := filepath.Glob(filepath.Join(work, pat))
		for _, m := range matches {
			os.Remove(m)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", false, err
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	tarLog := filepath.Join(b.cacheDir(), "logs", r.Distro+"-tar.log")
	if err := runLogged(ctx, tarLog, "tar", "--numeric-owner", "--xattrs", "--xattrs-include=*",
		"-C", work, "-cf", tmp, "."); err != nil {
		os.Remove(tmp)
		return "", false, fmt.Errorf("images: tar the %s rootfs: %w", r.Distro, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, err
	}
	return path, false, nil
}

// DebianMirror is the mirror debootstrap uses: $SANDCHECK_DEBIAN_MIRROR, else the first Debian
// archive among this host's own apt sources, else "" (debootstrap's default).
func DebianMirror() string {
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

// ensureTool installs a Debian package when its command is missing.
func ensureTool(ctx context.Context, command, pkg string, log io.Writer) error {
	if _, err := exec.LookPath(command); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("images: %s is missing (apt-get install %s, as root)", command, pkg)
	}
	fmt.Fprintf(log, "images: installing %s (apt-get)\n", pkg)
	for _, argv := range [][]string{{"apt-get", "update", "-qq"}, {"apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg}} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("images: %s: %w: %s", strings.Join(argv, " "), err, tailString(out, 600))
		}
	}
	if _, err := exec.LookPath(command); err != nil {
		return fmt.Errorf("images: %s still missing after installing %s", command, pkg)
	}
	return nil
}

// runLogged runs a command with its output in logFile, in its own process group so that ctx's
// end kills all of it; an error carries the log's tail.
func runLogged(ctx context.Context, logFile, name string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return err
	}
	f, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# %s %s\n", name, strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		b, _ := os.ReadFile(logFile)
		return fmt.Errorf("%w; last lines of %s:\n%s", err, logFile, tailString(b, 1500))
	}
	return nil
}

func tailString(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
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
			return fmt.Errorf("images: cannot unmount %v under %s; remove it by hand", mounts, abs)
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
