//go:build linux

package debootstrap

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/config"
)

func TestMirrorFrom(t *testing.T) {
	deb822 := `Types: deb
# a comment
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
`
	oneLine := "# deb http://old.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian/ bookworm main\n"
	security := "deb http://sec.example/debian-security bookworm-security main\n"
	cases := []struct {
		texts []string
		want  string
	}{
		{[]string{deb822}, "http://mirror.example/debian"},
		{[]string{oneLine}, "http://one.example/debian"},
		{[]string{security, oneLine}, "http://one.example/debian"},
		{[]string{security}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := mirrorFrom(c.texts); got != c.want {
			t.Errorf("mirrorFrom(%q) = %q, want %q", c.texts, got, c.want)
		}
	}
	t.Cleanup(config.With(func(e *config.Env) { e.DebianMirror = "http://override.example/debian" }))
	if got := Mirror(); got != "http://override.example/debian" {
		t.Errorf("Mirror with %s set = %q", config.DebianMirror, got)
	}
}

func TestMountsUnderMissingDir(t *testing.T) {
	if got := mountsUnder("/nonexistent-sandcheck-dir"); len(got) != 0 {
		t.Errorf("mounts under a missing dir: %v", got)
	}
}

func TestRemoveTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	if err := removeTree(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatalf("removing a missing tree: %v", err)
	}
}
