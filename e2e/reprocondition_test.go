package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/claudecode"
	"github.com/sandcheck/sandcheck/targets/codex"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/targets/srt"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// TestReproStandaloneConditions: two configurations a user ends up with are known findings of srt
// 0.0.83 and of both Claude Code releases the tests run: a dead proxy in the caller's environment
// becomes the sandbox's proxy's upstream (untrusted/proxy-env-dead), and proxy ports whose owner
// is not a proxy are used unchecked (failclosed/proxy-port-taken). `sandcheck repro` writes a
// reproducer of each that sets the condition itself (the caller's variables; a listener that
// accepts and closes, the settings' ports pointed at it) around a request for the allowed host,
// with a control without it: run outside sandcheck, each exits 1 with every release. srt's
// env-dead script, run with older releases, names the one that brought the bug: 0.0.42 went
// direct whatever the caller's environment said (exit 0), 0.0.43 took the caller's proxy (exit 1).
func TestReproStandaloneConditions(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "ip", "python3", "setpriv")
	bugs := map[string]string{
		"untrusted/proxy-env-dead":    "BUG: the sandbox ran the command, and its proxy failed the allowed host",
		"failclosed/proxy-port-taken": "BUG: the sandbox ran the command with its proxy ports on a program that is not a proxy",
	}
	for _, c := range srtAndClaude(t) {
		out := reproKnown(t, "--target", c.target, "--label-filter", "untrusted-proxy-env-dead || failclosed-proxy-port-taken")
		for id, bug := range bugs {
			script := filepath.Join(out, "repro", reproscript.FileName(id))
			for _, build := range c.builds {
				if code, got := runScript(t, script, build, ""); code != 1 || !strings.Contains(got, bug) {
					t.Errorf("%s with %s: %s: exit %d, want 1\n%s", c.target, build, id, code, got)
				}
			}
			if c.target != "srt" || id != "untrusted/proxy-env-dead" {
				continue
			}
			for release, want := range map[string]int{"0.0.42": 0, "0.0.43": 1} {
				in, err := npmcache.New().Install(context.Background(), npmcache.Spec{Package: srt.Package, Version: release, Bin: "srt"})
				if err != nil {
					t.Fatalf("install srt %s: %v", release, err)
				}
				if code, got := runScript(t, script, in.BinPath(), ""); code != want {
					t.Errorf("%s with srt %s: exit %d, want %d\n%s", id, release, code, want, got)
				}
			}
		}
	}
}

// TestReproStandaloneCodexEnvDead: Codex 0.171.0 takes a dead proxy in the caller's environment as
// its proxy's upstream too (a known finding), and then outlives its command, so the timeout may
// take the trial itself (targets/codex/knownfindings.yaml): the script is written from the
// trial's evidence whatever its verdict. Run outside sandcheck, its sessions bounded by
// CODEX_TIMEOUT, it exits 1: the command ran and the allowed host it reached with the caller's
// environment clean failed.
func TestReproStandaloneCodexEnvDead(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "ip", "python3", "setpriv", "timeout")
	codexBin, err := codex.Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	const id = "untrusted/proxy-env-dead"
	out := t.TempDir()
	sandcheckExit(t, nil, "run", "--target", "codex", "--label-filter", "untrusted-proxy-env-dead", "-n", "1", "--out", out)
	var path string
	if _, err := journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
		if p, err := writeScript(t, r, id); err == nil {
			path = p
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if path == "" {
		t.Fatalf("no trial of %s left evidence a script could be written from", id)
	}
	if code, got := runScript(t, path, codexBin, "", "CODEX_TIMEOUT=20"); code != 1 || !strings.Contains(got, "BUG: the sandbox ran the command, and its proxy failed the allowed host") {
		t.Errorf("%s with Codex: exit %d, want 1\n%s", id, code, got)
	}
}

// TestReproStandaloneConcurrency: sessions started together in one workspace interfere, a known
// finding of srt 0.0.83 (intermittent: most trials; a placeholder srt made and did not remove)
// and of both Claude Code releases the tests run (every trial: Claude Code's own
// .claude/.cc-writes left in the project): `sandcheck repro` writes the reproducer of
// concurrency/shared-workspace/k4, which starts the trial's four sessions at once, each with its
// own settings (and, for Claude Code, its files and a model of its own), round after round, and,
// run outside sandcheck, exits 1 with each: some round left the workspace changed. Claude Code's
// separate-workspaces script exits 1 too: its record is left in each workspace.
func TestReproStandaloneConcurrency(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "ip", "setpriv", "cmp", "python3")
	const id = "concurrency/shared-workspace/k4"
	for _, c := range srtAndClaude(t) {
		out := t.TempDir()
		// Three trials: srt's finding shows in most, not all.
		if stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", c.target, "--label-filter", "concurrency-shared-workspace", "-n", "3", "--out", out); code != 0 {
			t.Fatalf("sandcheck repro %s: exit %d, want 0 (known findings only)\n%s\n%s", c.target, code, stdout, stderr)
		}
		script := filepath.Join(out, "repro", reproscript.FileName(id))
		for _, build := range c.builds {
			if code, got := runScript(t, script, build, "", "ROUNDS=3"); code != 1 || !strings.Contains(got, "left the workspace changed (+ new, - gone)") {
				t.Errorf("%s with %s: exit %d, want 1\n%s", c.target, build, code, got)
			}
		}
	}
	// Separate workspaces: Claude Code leaves its own record in each all the same (every trial),
	// so one trial and two rounds with the newer release show it.
	const separate = "concurrency/separate-workspaces/k4"
	out := t.TempDir()
	if stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", claudecode.Name+"@"+claudeVersions[1], "--label-filter", "concurrency-separate-workspaces", "-n", "1", "--out", out); code != 0 {
		t.Fatalf("sandcheck repro %s: exit %d, want 0 (known findings only)\n%s\n%s", separate, code, stdout, stderr)
	}
	script := filepath.Join(out, "repro", reproscript.FileName(separate))
	if code, got := runScript(t, script, claudeRelease(t, claudeVersions[1]), "", "ROUNDS=2"); code != 1 || !strings.Contains(got, "/.claude/.cc-writes") {
		t.Errorf("%s with Claude Code %s: exit %d, want 1, .claude/.cc-writes left\n%s", separate, claudeVersions[1], code, got)
	}
}

// TestReproStandaloneClaudeUntrusted: Claude Code runs its Bash tool's commands unsandboxed, without
// a word, with a --settings file that is empty, not JSON, or in srt's dialect, and with no
// settings at all in a fresh HOME (known findings of both releases the tests run): `sandcheck
// repro` writes the reproducer of each, which lays out the files Claude Code was given, that one
// among them (none and an empty HOME for the last), and has its Bash tool run the seed's two
// curls; run outside sandcheck, each exits 1 with both releases: the denied host was reached.
func TestReproStandaloneClaudeUntrusted(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "ip", "python3", "setpriv", "curl")
	out := reproKnown(t, "--target", claudecode.Name+"@"+claudeVersions[0], "--label-filter", "untrusted")
	for _, id := range []string{"settings-empty", "settings-invalid-json", "settings-unknown-keys", "fresh-home"} {
		script := filepath.Join(out, "repro", reproscript.FileName("untrusted/"+id))
		for _, v := range claudeVersions {
			if code, got := runScript(t, script, claudeRelease(t, v), ""); code != 1 || !strings.Contains(got, "BUG: the denied host was reached") {
				t.Errorf("untrusted/%s with Claude Code %s: exit %d, want 1\n%s", id, v, code, got)
			}
		}
	}
}
