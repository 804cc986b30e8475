//go:build !linux

package privilege

// UsernsStep: user namespaces are Linux's.
func UsernsStep(step, path string) (string, string) {
	return path, "privileged step " + step + ": user namespaces are Linux's"
}
