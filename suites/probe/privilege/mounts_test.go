//go:build linux

package privilege

import "testing"

func TestMountPointIsTheLongestHoldingMount(t *testing.T) {
	for path, want := range map[string]string{
		"/proc/self/status":   "/proc",
		"/proc":               "/proc",
		"/proc-not/a/file":    "/",
		"/does/not/exist/yet": "/",
	} {
		got, err := mountPoint(path)
		if err != nil || got != want {
			t.Errorf("mountPoint(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}
