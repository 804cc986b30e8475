package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/codex"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// TestReproStandaloneCodex: Codex 0.171.0's proxy serves a request without the session's
// credentials (a known finding, targets/codex/knownfindings.yaml): `sandcheck repro` writes its
// reproducer, which, run outside sandcheck with the real Codex, exits 1 and shows the allowed
// host logging the request. The same script for a case Codex's proxy refuses (from the same
// run's evidence: a matching case through its HTTP proxy) exits 0.
func TestReproStandaloneCodex(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	const finding = "bypass/other-egress/proxy-no-credentials"
	out := reproKnown(t, "--target", "codex", "--label-filter", "bypass-other-egress-proxy-no-credentials || bypass-matching")
	script := filepath.Join(out, "repro", reproscript.FileName(finding))
	if code, got := runScript(t, script, codexBin, ""); code != 1 || !strings.Contains(got, "allowed@80 GET /repro/case") {
		t.Errorf("%s: exit %d, want 1 with the allowed host logging the request\n%s", script, code, got)
	}
	// A case Codex closes, its script from the same run: the first matching case that passed and
	// has one.
	closedScriptPasses(t, out, codexBin, func(name string) bool { return strings.HasPrefix(name, "bypass/matching/") })
}

// writeScript writes the script of scenario, from the trial rec, into a directory of the test's:
// its path, or why there is none.
func writeScript(t *testing.T, rec model.Record, scenario string) (string, error) {
	t.Helper()
	text, err := reproscript.Script(rec, scenario, "")
	if err != nil {
		return "", err
	}
	path := filepath.Join(t.TempDir(), reproscript.FileName(scenario))
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, nil
}

// closedScriptPasses writes the script of the first scenario of the run in out that match
// selects, passed, and has one, and runs it with the sandbox: it must exit 0.
func closedScriptPasses(t *testing.T, out, sandbox string, match func(string) bool) {
	t.Helper()
	var path, scenario string
	if _, err := journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
		for _, s := range r.Scenarios {
			if path != "" || !s.Pass || s.Outcome != model.Correct || !match(s.Name) {
				continue
			}
			if p, err := writeScript(t, r, s.Name); err == nil {
				path, scenario = p, s.Name
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if path == "" {
		t.Fatal("no case the sandbox closes has a script: nothing to show the script passing")
	}
	if code, got := runScript(t, path, sandbox, ""); code != 0 || !strings.Contains(got, "no bug") {
		t.Errorf("%s, which the sandbox refuses: exit %d, want 0\n%s", scenario, code, got)
	}
}

// TestReproStandaloneCodexOwnBinary: run from a project's node_modules, Codex lets its command
// replace Codex's own launcher there (a known finding): the reproducer, which copies the
// installation into its working directory and runs Codex from the copy, exits 1 with the real
// Codex; the script of a persistence case Codex closes (its own .codex/config.toml), from the
// same run, exits 0.
func TestReproStandaloneCodexOwnBinary(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt")
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	out := reproKnown(t, "--target", "codex", "--label-filter", "bypass-persistence-own-binary || bypass-persistence-codex-config")
	script := filepath.Join(out, "repro", reproscript.FileName("bypass/persistence/own-binary"))
	if code, got := runScript(t, script, codexBin, ""); code != 1 || !strings.Contains(got, "replaced node_modules/@openai/codex/bin/codex.js") {
		t.Errorf("%s: exit %d, want 1 with the launcher replaced\n%s", script, code, got)
	}
	closedScriptPasses(t, out, codexBin, func(name string) bool { return name == "bypass/persistence/codex-config" })
}

// codexSettingsFaults are Codex's known-bad faults that change only its settings, the scripts
// each makes, and a case its healthy release closes: TestReproStandaloneCodexSettingsFault runs
// them.
var codexSettingsFaults = []struct {
	fault, labels, closed string
	scripts               int
}{
	{"methods-ignored", "bypass-methods-post || bypass-methods-put", "bypass/methods/post", 2},
	{"private-guard-off", "bypass-private-addresses", "bypass/private-addresses/loopback", 4},
	{"project-roots-off", "bypass-persistence-codex-config", "bypass/persistence/codex-config", 1},
	{"netns-shared", netLabels, "bypass/other-egress/udp", 10},
}

// TestReproStandaloneCodexSettingsFault: a fault that only changes Codex's settings gets the
// scripts a real finding does, carrying the faulted settings: each, run outside sandcheck with the
// real Codex, exits 1, and its opening says the settings are the fault's. The script of the same
// case from a run without the fault exits 0. methods-ignored turns Codex's network mode back to
// full; private-guard-off lets its proxy dial names that resolve to private addresses, a session
// whose controls name the allowed host by address (the script's own in its place);
// project-roots-off makes the working directory a plain writable path, its .codex unprotected;
// netns-shared turns network access on and the proxy off, so every request that uses no proxy
// gets out and every host unix socket, abstract or not, is connectable.
func TestReproStandaloneCodexSettingsFault(t *testing.T) {
	requireSandbox(t)
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	for _, c := range codexSettingsFaults {
		t.Run(c.fault, func(t *testing.T) {
			settingsFaultScriptsFail(t, "codex", c.fault, c.labels, codexBin, c.scripts)
			healthy := t.TempDir()
			if _, stderr, code := sandcheckExit(t, nil, "run", "--target", "codex", "--label-filter", c.labels, "-n", "1", "--out", healthy); code != 0 {
				t.Fatalf("sandcheck run without the fault: exit %d\n%s", code, stderr)
			}
			closedScriptPasses(t, healthy, codexBin, func(name string) bool { return name == c.closed })
		})
	}
}

// settingsFaultScriptsFail runs sandcheck repro under a fault that changes only the target's
// settings and every script it writes, outside sandcheck with the real sandbox: there must be
// scripts for that many scenarios, each exiting 1 and saying its settings are the fault's.
func settingsFaultScriptsFail(t *testing.T, target, fault, labels, sandbox string, scripts int) {
	t.Helper()
	written := faultScripts(t, target, fault, labels)
	if len(written) != scripts {
		t.Fatalf("scripts for %d scenarios, want %d: %+v", len(written), scripts, written)
	}
	for _, w := range written {
		if w.Path == "" {
			t.Errorf("%s: no reproducer: %s", w.Scenario, w.Why)
			continue
		}
		if code, got := runScript(t, w.Path, sandbox, ""); code != 1 || !strings.Contains(got, "BUG") {
			t.Errorf("%s with the faulted settings: exit %d, want 1\n%s", w.Scenario, code, got)
		}
		if script, _ := os.ReadFile(w.Path); !strings.Contains(string(script), "changed the sandbox's settings and nothing") {
			t.Errorf("%s: the script does not say its settings are the fault's", w.Scenario)
		}
	}
}
