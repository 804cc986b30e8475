//go:build !linux

package probe

// privileged: mounts are Linux's.
func privileged(step, path string) string { return "privileged step " + step + ": mounts are Linux's" }
