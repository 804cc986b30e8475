package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// claudeFSOpen are Claude Code's filesystem findings pinned on both releases the tests run, and
// claudeFSFixed those pinned on 2.1.215 that a later release fixed (2.1.232: the read-denied file's
// directory renamed; 2.1.275: the protected git files from a subdirectory).
var (
	claudeFSOpen = []string{"fs-interplay/protected-bashrc-from-subdir", "fs-interplay/deny-read-dir-write", "globs/late",
		"globs/unanchored", "git/submodule-config", "git/deep-repo-config", "git/new-repo-config", "git/bare-repo-config", "git/worktree-pointer",
		"persistence/git-xdg-config", "persistence/own-binary"}
	claudeFSFixed = []string{"fs-interplay/deny-read-parent-rename", "fs-interplay/protected-git-hooks-from-subdir",
		"fs-interplay/protected-git-config-from-subdir"}
)

// TestReproStandaloneClaudeFS: `sandcheck repro` on Claude Code writes, for each of its pinned
// fs-interplay, globs and git findings, a reproducer that drives Claude Code itself (its Bash tool
// asked by the script's own model), run outside sandcheck as a maintainer would: each exits 1 with
// the pinned 2.1.215; those still open exit 1 with 2.1.332 too, and those a later release fixed
// exit 0 with it. As root, 2.1.215's privilege findings (the command kept root's capabilities)
// exit 1 with it and 0 with 2.1.332, which drops them.
func TestReproStandaloneClaudeFS(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt", "ip", "python3")
	out := reproKnown(t, "--target", claudecode.Name+"@"+claudeVersions[0], "--label-filter", "bypass-fs-interplay || bypass-globs || bypass-git || bypass-persistence-git-xdg-config || bypass-persistence-own-binary")
	for _, id := range append(append([]string{}, claudeFSOpen...), claudeFSFixed...) {
		script := filepath.Join(out, "repro", reproscript.FileName("bypass/"+id))
		want := map[string]int{claudeVersions[0]: 1, claudeVersions[1]: 1}
		if slices.Contains(claudeFSFixed, id) {
			want[claudeVersions[1]] = 0
		}
		for v, code := range want {
			got, text := runScript(t, script, claudeRelease(t, v), "")
			if got != code || code == 1 && !strings.Contains(text, "BUG: ") {
				t.Errorf("%s with Claude Code %s: exit %d, want %d\n%s", id, v, got, code, text)
			}
		}
	}
	out = reproKnown(t, "--target", claudecode.Name+"@"+claudeVersions[0], "--user", "root", "--label-filter", "bypass-privilege")
	for _, id := range []string{"privilege/unmount-protected", "privilege/unmount-deny-read", "privilege/remount-rw", "privilege/ptrace-helper"} {
		script := filepath.Join(out, "repro", reproscript.FileName("bypass/"+id))
		for v, code := range map[string]int{claudeVersions[0]: 1, claudeVersions[1]: 0} {
			if got, text := runScript(t, script, claudeRelease(t, v), ""); got != code {
				t.Errorf("%s as root with Claude Code %s: exit %d, want %d\n%s", id, v, got, code, text)
			}
		}
	}
}
