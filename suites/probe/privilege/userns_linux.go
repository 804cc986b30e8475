package privilege

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// viewRoot is where UsernsBind and UsernsOpenTree put their view: a tmpfs of the namespace's
// own, mounted over a directory every root file system has.
const viewRoot = "/mnt"

// UsernsStep takes a step in the new user and mount namespace the caller is in, for an
// operation on path: the path the operation then goes through, and what the step did.
func UsernsStep(step, path string) (string, string) {
	if step == UsernsUnmount {
		return path, Mounts(Unmount, path)
	}
	mp, err := mountPoint(path)
	if err != nil {
		return path, err.Error()
	}
	// The directory that holds the mount over the path (on the file, or on a directory it is
	// in): bound alone, it shows what lies beneath. Where no mount is that close, the path's own
	// directory.
	parent := filepath.Dir(path)
	if mp == parent || strings.HasPrefix(mp, parent+"/") {
		parent = filepath.Dir(mp)
	}
	rel, err := filepath.Rel(parent, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path, fmt.Sprintf("%s is not below %s", path, parent)
	}
	if err := unix.Mount("sandcheck-view", viewRoot, "tmpfs", 0, "size=1m"); err != nil {
		return path, fmt.Sprintf("mount a tmpfs over %s: %v", viewRoot, err)
	}
	view := filepath.Join(viewRoot, "view")
	if err := os.Mkdir(view, 0o755); err != nil {
		return path, err.Error()
	}
	switch step {
	case UsernsBind:
		if err := unix.Mount(parent, view, "", unix.MS_BIND, ""); err != nil {
			return path, fmt.Sprintf("bind %s alone: %v", parent, err)
		}
	case UsernsOpenTree:
		fd, err := unix.OpenTree(unix.AT_FDCWD, parent, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return path, fmt.Sprintf("open_tree(%s, OPEN_TREE_CLONE): %v", parent, err)
		}
		defer unix.Close(fd)
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, view, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return path, fmt.Sprintf("move_mount to %s: %v", view, err)
		}
	default:
		return path, fmt.Sprintf("unknown step %q", step)
	}
	return filepath.Join(view, rel), fmt.Sprintf("%s without its submounts at %s", parent, view)
}
