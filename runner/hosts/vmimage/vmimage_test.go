//go:build linux

package vmimage

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

func TestMirrorComesFromThisMachinesAPT(t *testing.T) {
	m, err := Mirror()
	if err != nil {
		skip.Missing(t, "no APT sources here: %v", err)
	}
	if !strings.Contains(m, "://") {
		t.Fatalf("mirror %q", m)
	}
}

func TestBuilderRejectsOddSuites(t *testing.T) {
	b := &Builder{Cache: t.TempDir()}
	for _, s := range []string{"", "../etc", "a b"} {
		if _, err := b.Kernel(t.Context(), s); err == nil {
			t.Errorf("suite %q accepted", s)
		}
	}
}
