// Package privilege is the probe's side of the privilege bypass class: the steps a command that
// kept privileges over its sandbox takes on the sandbox's own mounts, and taking over a process
// in view that is less confined than the command (ptrace, its memory opened for writing). Like
// the rest of the probe it reports what happened and judges nothing.
package privilege

// Steps on the mounts a check can take before its operation (Mounts). Each works on the mount
// that holds the path; the operation is tried whatever the step's result.
const (
	// Remount remounts the mount holding the path read-write (`mount -o remount,rw`).
	Remount = "remount-rw"
	// Unmount detaches the mounts stacked over the path (a read-only bind over a protected
	// file, /dev/null or a tmpfs over a denied one), down to the mount that holds the working
	// directory, which it leaves in place so that the checks after it still run where they were.
	Unmount = "unmount"
)

// Steps taken in a new user and mount namespace of the command's own, where it is root (`unshare
// -rm`): the operation then runs there too (InUserns). A sandbox's mounts come into such a
// namespace locked, and must stay so.
const (
	// UsernsUnmount detaches the mounts stacked over the path, as Unmount does.
	UsernsUnmount = "userns-unmount"
	// UsernsBind binds the directory that holds the mount over the path, alone (not its
	// submounts), at a view of its own, and the operation goes through the view: the path as
	// it is beneath the mount.
	UsernsBind = "userns-bind"
	// UsernsOpenTree does the same with the new mount API: open_tree(OPEN_TREE_CLONE) without
	// AT_RECURSIVE, then move_mount to the view.
	UsernsOpenTree = "userns-open-tree"
)

// InUserns says whether a step is taken in a new user namespace.
func InUserns(step string) bool {
	return step == UsernsUnmount || step == UsernsBind || step == UsernsOpenTree
}
