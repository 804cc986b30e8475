package bypassfaults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// A reproducer carries a settings-only fault's settings and nothing else, so srt-seccomp is one
// only where the helper it names is the system's (mode=none: env, which runs the command
// unfiltered); socket-only's helper is a file of the trial's that runs sandcheck's binary, which a
// script would name and not have (srt then falls back to its own helper, and the script to a
// pass).
func TestSeccompHelperSettingsOnly(t *testing.T) {
	for mode, settingsOnly := range map[string]bool{"none": true, "socket-only": false} {
		f, params, err := faults.Parse("srt-seccomp:mode=" + mode)
		if err != nil {
			t.Fatal(err)
		}
		in := &faults.Injection{Dir: t.TempDir(), Params: params, ProbeBin: "/usr/local/bin/sandcheck", Target: "srt"}
		if err := f.Apply(in); err != nil {
			t.Fatal(err)
		}
		c := in.Changes()
		if got := c.SettingsOnly(); got != settingsOnly {
			t.Errorf("mode=%s: settings only %v, want %v", mode, got, settingsOnly)
		}
		s := map[string]any{}
		for _, p := range c.Patches {
			p(s)
		}
		helper, _ := targets.SettingsObject(s, "seccomp")["applyPath"].(string)
		if st, err := os.Stat(helper); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("mode=%s: the helper %q is not an executable: %v", mode, helper, err)
		}
		if settingsOnly && !strings.HasPrefix(helper, "/usr/bin/") {
			t.Errorf("mode=%s: the helper %q is not the system's", mode, helper)
		}
	}
}
