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
