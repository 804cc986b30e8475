//go:build linux

package vm

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// A vm entry's keys, as the matrix reads them through this kind; its guests have only root and
// the dedicated account.
func TestSettings(t *testing.T) {
	parse := func(entry string) (*matrix.Matrix, error) {
		return matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts:\n  - "+entry+"\n"), matrix.Registry{HostKinds: hosts.Matrix()})
	}
	m, err := parse("{name: v, kind: vm, image: bookworm, memory_mib: 512, rootfs: trixie, accel: tcg, trials_per_boot: 10}")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Kernel: "bookworm", MemoryMiB: 512, Rootfs: "trixie", Accel: "tcg", TrialsPerBoot: 10}
	if got := m.Hosts[0].Settings.(Config); got.Kernel != want.Kernel || got.MemoryMiB != want.MemoryMiB || got.Rootfs != want.Rootfs ||
		got.Accel != want.Accel || got.TrialsPerBoot != want.TrialsPerBoot {
		t.Fatalf("settings = %+v", got)
	}
	for entry, want := range map[string]string{
		"{name: v, kind: vm}":                                    "m.yaml:3: hosts[0].image: missing (a vm host needs a VM image)",
		"{name: v, kind: vm, image: x, memory_mib: 64}":          "m.yaml:3: hosts[0].memory_mib: 64 MiB is too little (expected at least 128)",
		"{name: v, kind: vm, image: x, accel: hvf}":              `m.yaml:3: hosts[0].accel: unknown value "hvf" (expected one of: tcg, kvm)`,
		"{name: v, kind: vm, image: x, trials_per_boot: 0}":      "m.yaml:3: hosts[0].trials_per_boot: must be at least 1",
		"{name: v, kind: vm, image: bookworm, user: [root, ci]}": `m.yaml:3: hosts[0].user: "ci": a vm guest has only unprivileged and root`,
	} {
		if _, err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", entry, err, want)
		}
	}
}
