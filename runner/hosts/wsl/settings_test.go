package wsl

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// A wsl entry's keys, as the matrix reads them through this kind.
func TestSettings(t *testing.T) {
	parse := func(entry string) (*matrix.Matrix, error) {
		return matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts:\n  - "+entry+"\n"), matrix.Registry{HostKinds: hosts.Matrix()})
	}
	m, err := parse("{name: w, kind: wsl, distro: Debian, login: me, cold_start: every}")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Hosts[0].Settings.(Config); got.Distro != "Debian" || got.User != "me" || got.Cold != ColdEvery {
		t.Fatalf("settings = %+v", got)
	}
	for entry, want := range map[string]string{
		"{name: w, kind: wsl}": "m.yaml:3: hosts[0].distro: missing (a wsl host needs a WSL distribution name)",
		"{name: w, kind: wsl, distro: D, cold_start: sometimes}": `m.yaml:3: hosts[0].cold_start: unknown value "sometimes" (expected one of: first, every)`,
	} {
		if _, err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", entry, err, want)
		}
	}
}
