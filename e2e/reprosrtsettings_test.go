package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// srtSettingsFaults are srt's known-bad faults that change only its settings, and the scripts
// each makes: TestReproStandaloneSrtSettingsFaults runs them.
var srtSettingsFaults = []struct {
	fault, labels string
	scripts       int
}{
	{"credentials-ignored", "bypass-secrets", 4},
	{"inject-anywhere", "bypass-secrets", 2},
	{"srt-seccomp:mode=none", "bypass-unix-sockets", 2},
}

// TestReproStandaloneSrtSettingsFaults: srt's faults that change only its settings: the secrets
// ones (credentials-ignored drops the credentials section; inject-anywhere lets masked secrets be
// swapped back towards every allowed host), and srt-seccomp:mode=none (its seccomp helper the
// system's env, which filters nothing). Each finding gets a script carrying the faulted
// settings, which exits 1 with the real, healthy srt: a secrets script plants secrets of its own
// where the trial planted its and sends what the command reads of them to the allowed host. The
// secrets cases' scripts from a run without the fault exit 0, every one of them (the
// unix-sockets ones: TestReproStandalone).
func TestReproStandaloneSrtSettingsFaults(t *testing.T) {
	requireSandbox(t)
	srt := srtPath(t)
	for _, c := range srtSettingsFaults {
		t.Run(c.fault, func(t *testing.T) {
			settingsFaultScriptsFail(t, "srt", c.fault, c.labels, srt, c.scripts)
		})
	}
	t.Run("healthy", func(t *testing.T) {
		out := t.TempDir()
		if _, stderr, code := sandcheckExit(t, nil, "run", "--target", "srt", "--label-filter", "bypass-secrets", "-n", "1", "--out", out); code != 0 {
			t.Fatalf("sandcheck run without a fault: exit %d\n%s", code, stderr)
		}
		ran := 0
		if _, err := journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
			for _, s := range r.Scenarios {
				if !strings.HasPrefix(s.Name, "bypass/secrets/") {
					continue
				}
				if !s.Pass {
					t.Errorf("%s fails on the healthy srt: %s", s.Name, s.Outcome)
					continue
				}
				path, err := writeScript(t, r, s.Name)
				if err != nil {
					t.Errorf("%s: no script: %v", s.Name, err)
					continue
				}
				ran++
				if code, got := runScript(t, path, srt, ""); code != 0 || !strings.Contains(got, "no bug") {
					t.Errorf("%s on the healthy srt: exit %d, want 0\n%s", s.Name, code, got)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if ran != 4 {
			t.Errorf("%d secrets scripts ran, want 4", ran)
		}
	})
}
