package privilege

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// Mounts takes a check's privileged step on the mounts over path and says what it did.
func Mounts(step, path string) string {
	switch step {
	case Remount:
		mp, err := mountPoint(path)
		if err != nil {
			return err.Error()
		}
		// The mount's own flags first (a read-only bind of a writable filesystem), then the
		// filesystem's, as `mount -o remount,rw` tries them.
		errBind := unix.Mount("", mp, "", unix.MS_REMOUNT|unix.MS_BIND, "")
		if errBind == nil {
			return "remounted " + mp + " read-write (bind)"
		}
		if err := unix.Mount("", mp, "", unix.MS_REMOUNT, ""); err != nil {
			return fmt.Sprintf("remount %s: %v (bind: %v)", mp, err, errBind)
		}
		return "remounted " + mp + " read-write"
	case Unmount:
		wd, err := os.Getwd()
		if err != nil {
			return err.Error()
		}
		floor, err := mountPoint(wd)
		if err != nil {
			return err.Error()
		}
		var done []string
		// Bounded: a sandbox stacks a few mounts on a path, never many.
		for range 8 {
			mp, err := mountPoint(path)
			if err != nil {
				return err.Error()
			}
			// Only mounts deeper than the one that holds the working directory: without that
			// one, every later check would run somewhere else.
			if mp == "/" || mp == floor || floor != "/" && !strings.HasPrefix(mp, floor+"/") {
				break
			}
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
				return fmt.Sprintf("%sumount %s: %v", prefixed(done), mp, err)
			}
			done = append(done, mp)
		}
		if len(done) == 0 {
			return "no mount over " + path + " below the working directory's"
		}
		return "unmounted " + strings.Join(done, ", ")
	}
	return fmt.Sprintf("unknown privileged step %q", step)
}

func prefixed(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return "unmounted " + strings.Join(done, ", ") + "; "
}

// mountPoint is the mount point, as this process sees its mounts, of the mount that holds path
// (which need not exist yet): the longest mount point that is path or one of its parents, the
// last mounted of those stacked there.
func mountPoint(path string) (string, error) {
	path = filepath.Clean(path)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("mount point of %s: %w", path, err)
	}
	defer f.Close()
	best := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := procfs.UnescapeMount(fields[4])
		if (mp == path || mp == "/" || strings.HasPrefix(path, mp+"/")) && len(mp) >= len(best) {
			best = mp
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("mount point of %s: %w", path, err)
	}
	if best == "" {
		return "", fmt.Errorf("mount point of %s: none in /proc/self/mountinfo", path)
	}
	return best, nil
}
