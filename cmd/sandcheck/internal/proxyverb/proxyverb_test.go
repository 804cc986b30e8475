package proxyverb

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input is exit 2 with the file and the field named: settings without proxy ports, an unknown
// bug, no settings at all.
func TestBadInput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(f, []byte(`{"network":{"allowedDomains":["a.test"]}}`), 0o644)
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no ports":    {[]string{f}, f + ": network.httpProxyPort"},
		"unknown bug": {[]string{"--bug", "nosuch", f}, `unknown bug "nosuch"`},
		"no settings": {nil, "usage:"},
		"not there":   {[]string{f + ".missing"}, "no such file"},
	} {
		var stderr bytes.Buffer
		if code := runBadProxy(c.args, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, want 2 saying %q\n%s", name, code, c.want, stderr.String())
		}
	}
}
