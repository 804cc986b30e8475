//go:build !linux

package privilege

// Mounts: mounts are Linux's.
func Mounts(step, path string) string { return "privileged step " + step + ": mounts are Linux's" }
