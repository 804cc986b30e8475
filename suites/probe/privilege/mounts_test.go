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

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/tab\011`: "/tab\t", `/plain`: "/plain", `/back\134slash`: `/back\slash`, `/short\04`: `/short\04`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
