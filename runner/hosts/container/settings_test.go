//go:build linux

package container

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// A container entry's keys, as the matrix reads them through this kind: an image is required,
// the profile is one of two, per_trial_container a boolean; errors name file:line and field.
func TestSettings(t *testing.T) {
	parse := func(entry string) (*matrix.Matrix, error) {
		return matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts:\n  - "+entry+"\n"), matrix.Registry{HostKinds: hosts.Matrix()})
	}
	m, err := parse("{name: c, kind: container, image: i, profile: docker-default, per_trial_container: true, user: root}")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Hosts[0].Settings.(Config); got.Image != "i" || got.Profile != ProfileDockerDefault || !got.PerTrial {
		t.Fatalf("settings = %+v", got)
	}
	if m, _ := parse("{name: c, kind: container, image: i}"); m.Hosts[0].Settings.(Config).Profile != ProfileBwrapReady {
		t.Fatalf("default profile: %+v", m.Hosts[0])
	}
	for entry, want := range map[string]string{
		"{name: c, kind: container}":                                       "m.yaml:3: hosts[0].image: missing (a container host needs an image name)",
		`{name: c, kind: container, image: ""}`:                            "m.yaml:3: hosts[0].image: empty (a container host needs an image name)",
		"{name: c, kind: container, image: i, profile: privileged}":        `m.yaml:3: hosts[0].profile: unknown profile "privileged" (expected bwrap-ready or docker-default)`,
		"{name: c, kind: container, image: i, per_trial_container: maybe}": `m.yaml:3: hosts[0].per_trial_container: expected true or false, got "maybe"`,
		"{name: c, kind: container, image: i, distro: x}":                  "m.yaml:3: hosts[0].distro: unknown key (expected one of: name, kind, user, image, profile, per_trial_container)",
	} {
		if _, err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", entry, err, want)
		}
	}
}
