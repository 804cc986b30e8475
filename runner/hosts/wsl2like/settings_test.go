//go:build linux

package wsl2like

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/vm"
)

// A wsl2-like entry: the vm keys, read as a vm entry's, and WSL's own.
func TestSettings(t *testing.T) {
	parse := func(entry string) (*matrix.Matrix, error) {
		return matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts:\n  - "+entry+"\n"), matrix.Registry{HostKinds: hosts.Matrix()})
	}
	m, err := parse("{name: w, kind: wsl2-like, image: bookworm, trials_per_boot: 50, variant: wsl1, cpu_percent: 25, distro: Ubuntu, home_on_drive: true, drive_protocol: 9p2000.u}")
	if err != nil {
		t.Fatal(err)
	}
	got := m.Hosts[0].Settings.(Config)
	if got.VM.Kernel != "bookworm" || got.VM.TrialsPerBoot != 50 || got.Variant != WSL1 || got.CPUPercent != 25 || got.Distro != "Ubuntu" || !got.HomeOnDrive || got.DriveProtocol != Drive9P2000U {
		t.Fatalf("settings = %+v", got)
	}
	for entry, want := range map[string]string{
		"{name: w, kind: wsl2-like}":                                          "m.yaml:3: hosts[0].image: missing",
		"{name: w, kind: wsl2-like, image: bookworm, variant: wsl3}":          `m.yaml:3: hosts[0].variant: unknown value "wsl3" (expected one of: wsl2, wsl1)`,
		"{name: w, kind: wsl2-like, image: bookworm, cpu_percent: 0}":         "m.yaml:3: hosts[0].cpu_percent: must be at least 1",
		"{name: w, kind: wsl2-like, image: bookworm, user: ci}":               `m.yaml:3: hosts[0].user: "ci": a vm guest has only`,
		"{name: w, kind: wsl2-like, image: bookworm, distro: 1.5}":            "",
		"{name: w, kind: wsl2-like, image: bookworm, drive_protocol: 9p2000}": `m.yaml:3: hosts[0].drive_protocol: unknown value "9p2000" (expected one of: 9p2000.L, 9p2000.u)`,
	} {
		_, err := parse(entry)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", entry, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", entry, err, want)
		}
	}
}

// Before Prepare the host describes itself from its entry, and refuses trials.
func TestHostBeforePrepare(t *testing.T) {
	h, err := New(Config{VM: vmConfig("bookworm"), CPUPercent: 25})
	if err != nil {
		t.Fatal(err)
	}
	iso := h.Isolation()
	for _, want := range []string{"WSL2-like", "-microsoft-standard-WSL2", DriveDir, "CPU budget 25%"} {
		if !strings.Contains(iso, want) {
			t.Errorf("isolation %q lacks %q", iso, want)
		}
	}
	if r := h.Exec(t.Context(), hosts.Cmd("true"), 0); r.Err == nil {
		t.Error("an unprepared host ran a trial")
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	if _, err := New(Config{VM: vmConfig("bookworm"), Variant: "wsl3"}); err == nil {
		t.Error("variant wsl3 accepted")
	}
}

func vmConfig(kernel string) vm.Config { return vm.Config{Name: "w", Kernel: kernel} }
