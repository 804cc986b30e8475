package bypassfaults

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/bwrap"
	"github.com/sandcheck/sandcheck/targets/firejail"
	"github.com/sandcheck/sandcheck/targets/srt"
)

// The bypass faults apply where their seams are: srt's settings format (its proxy ports, its
// seccomp helper) on srt alone; a bwrap shim on PATH wherever bwrap is run from PATH.
func TestBypassFaultsApplyWhereTheSeamsAre(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "sandbox")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	mk := map[string]func() (targets.Target, error){
		"srt":      func() (targets.Target, error) { return srt.New(exe) },
		"bwrap":    func() (targets.Target, error) { return bwrap.New(exe) },
		"firejail": func() (targets.Target, error) { return firejail.New(exe) },
	}
	want := map[string][]string{
		"srt":      {"bad-proxy", "credentials-ignored", "fs-unmask", "inject-anywhere", "pidns-shared", "srt-seccomp", "tty-shared"},
		"bwrap":    {"fs-unmask", "pidns-shared", "tty-shared"},
		"firejail": nil,
	}
	for name, build := range mk {
		tg, err := build()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range faults.All() {
			if ok, _ := f.AppliesTo(tg); ok && f.Scope == faults.ScopeBypass {
				got = append(got, f.Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s: bypass faults %v, want %v", name, got, want[name])
		}
	}
}
