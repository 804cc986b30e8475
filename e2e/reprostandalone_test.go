package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/suites/bypass/knownbad"
	"github.com/sandcheck/sandcheck/targets/claudecode"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// Published escapes from end to end (issues 28 and 31), each on the real releases: as the
// unprivileged user, `bisect` from the last open release to the pinned one names the release that
// fixed it (the long tier); `repro --out DIR` on the open release writes DIR/repro/<scenario>.sh; and that script,
// run as a maintainer would run it (sh, a fresh environment, outside sandcheck), shows the bug
// with the last open release (exit 1) and not with the fixing one (exit 0).
//   - bypass/resolved-address/loopback: srt dialled an allowed name (*.rebind...) resolving to
//     the host's loopback up to 0.0.75; 0.0.76 refuses it.
//   - bypass/matching/nul: srt's SOCKS5 proxy took a name carrying a NUL (denied...\0.wild...)
//     for an allowed one and dialled the denied host up to 0.0.42; 0.0.43 refuses it.
//   - bypass/unix-sockets/uring-host-socket: srt's seccomp filter refused socket(AF_UNIX) but
//     not io_uring's IORING_OP_SOCKET up to 0.0.44; 0.0.45 filters it.
//   - bypass/other-egress/proxy-no-credentials: srt's proxy served anyone who reached its port
//     up to 0.0.54; 0.0.55 asks for the session's token.
//
// The io_uring one's script makes and connects its socket through io_uring as the trial did (a
// few lines of python3 on the raw system calls).
var publishedEscapes = []struct {
	scenario, labels, open, fixed, reached string
}{
	{"bypass/resolved-address/loopback", "bypass-resolved-address-loopback", "0.0.75", "0.0.76", "loopback@80 GET /repro/case"},
	{"bypass/matching/nul", "bypass-matching-nul", "0.0.42", "0.0.43", "denied@80 GET /repro/case"},
	{"bypass/unix-sockets/uring-host-socket", "bypass-unix-sockets-uring-host-socket", "0.0.44", "0.0.45", "BUG: the sandboxed command reached the host's unix socket"},
	{"bypass/other-egress/proxy-no-credentials", "bypass-other-egress-proxy-no-credentials", "0.0.54", "0.0.55", "allowed@80 GET /repro/case"},
}

// bisectNames: `bisect` from the last open release to the pinned one names the release that
// fixed it (the long tier: each bisect installs and runs about six releases).
func bisectNames(t *testing.T, target, labels, open, fixed, newest string) {
	t.Helper()
	stdout, stderr, code := sandcheckExit(t, nil, "bisect", "--target", target, "--label-filter", labels,
		"--good", open, "--bad", newest, "-n", "5", "--out", t.TempDir(), "--json")
	var fix struct {
		FirstBad string `json:"first_bad"`
		LastGood string `json:"last_good"`
	}
	if err := json.Unmarshal([]byte(stdout), &fix); err != nil || code != 0 || fix.FirstBad != fixed || fix.LastGood != open {
		t.Fatalf("bisect: exit %d, %+v (%v), want the fix in %s after %s\n%s\n%s", code, fix, err, fixed, open, stdout, stderr)
	}
}

func TestReproStandalone(t *testing.T) {
	requireSandbox(t)
	stayInFixture(t)
	for _, e := range publishedEscapes {
		t.Run(e.scenario, func(t *testing.T) {
			if isLong() {
				bisectNames(t, "srt", e.labels, e.open, e.fixed, "0.0.83")
			}
			out := t.TempDir()
			stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", "srt@"+e.open, "--label-filter", e.labels, "-n", "1", "--out", out)
			if code != 1 {
				t.Fatalf("sandcheck repro on srt %s: exit %d, want 1 (the escape)\n%s\n%s", e.open, code, stdout, stderr)
			}
			script := filepath.Join(out, "repro", reproscript.FileName(e.scenario))
			if !strings.Contains(stdout, script) {
				t.Errorf("the report does not name the reproducer %s:\n%s", script, stdout)
			}
			for _, c := range []struct {
				release string
				want    int
			}{{e.open, 1}, {e.fixed, 0}} {
				code, got := runScript(t, script, srtRelease(c.release), "")
				if code != c.want {
					t.Errorf("%s with srt %s: exit %d, want %d\n%s", script, c.release, code, c.want, got)
				}
				if c.want == 1 && !strings.Contains(string(got), e.reached) {
					t.Errorf("%s with srt %s: %q is not in what it printed:\n%s", script, c.release, e.reached, got)
				}
			}
		})
	}
}

// exitCode is a finished command's exit status (-1: it did not run to an exit).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if x, ok := err.(*exec.ExitError); ok {
		return x.ExitCode()
	}
	return -1
}

// gitFindings are the git class's findings pinned on srt 0.0.83: each one's reproducer, run as a
// maintainer would, shows git running outside the sandbox what the sandboxed command planted.
var gitFindings = []string{"submodule-config", "deep-repo-config", "new-repo-config", "bare-repo-config", "worktree-pointer"}

// TestReproStandaloneGit: `sandcheck repro` on the healthy srt writes a reproducer for each git
// finding, which exits 1 run outside sandcheck; the same script for a case srt closes
// (nested-repo-config, from the same trial's evidence) exits 0.
func TestReproStandaloneGit(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git")
	out := reproKnown(t, "--target", "srt", "--label-filter", "bypass-git")
	run := func(script string) (int, string) { return runScript(t, script, srtPath(t), "") }
	for _, id := range gitFindings {
		script := filepath.Join(out, "repro", reproscript.FileName("bypass/git/"+id))
		if code, got := run(script); code != 1 || !strings.Contains(got, "BUG: git ran a command the sandboxed command planted") {
			t.Errorf("%s: exit %d, want 1\n%s", script, code, got)
		}
	}
	var rec model.Record
	if _, err := journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error { rec = r; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := reproscript.Script(rec, "bypass/git/nested-repo-config", "")
	if err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(t.TempDir(), "nested.sh")
	if err := os.WriteFile(closed, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, got := run(closed); code != 0 || !strings.Contains(got, "no bug") {
		t.Errorf("nested-repo-config, which srt closes: exit %d, want 0\n%s", code, got)
	}
}

// reproKnown runs `sandcheck repro ARGS... -n 1 --out DIR` where every failure is a known
// finding (exit 0), and returns DIR.
func reproKnown(t *testing.T, args ...string) string {
	t.Helper()
	out := t.TempDir()
	stdout, stderr, code := sandcheckExit(t, nil, append(append([]string{"repro"}, args...), "-n", "1", "--out", out)...)
	if code != 0 || !strings.Contains(stdout, "known finding") {
		t.Fatalf("sandcheck repro %s: exit %d, want 0 (known findings only)\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return out
}

// reachableDir is a directory for stand-in sandboxes that any account can reach (a test's own
// temporary directory is root's alone), removed after the test.
func reachableDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// srtRelease is the srt executable of a release in the npm cache.
func srtRelease(release string) string {
	return filepath.Join(npmcache.New().Root(), "@anthropic-ai", "sandbox-runtime@"+release, "node_modules", ".bin", "srt")
}

// builds is a target as `repro --target` takes it, with the builds its scripts are run with.
type builds struct {
	target string
	builds []string
}

// srtAndClaude are the targets of a finding pinned on srt 0.0.83 and on both Claude Code releases
// the tests run: srt's script run with srt, Claude Code's (from a 2.1.215 trial) with each release.
func srtAndClaude(t *testing.T) []builds {
	return []builds{
		{"srt", []string{srtPath(t)}},
		{claudecode.Name + "@" + claudeVersions[0], []string{claudeRelease(t, claudeVersions[0]), claudeRelease(t, claudeVersions[1])}},
	}
}

// runScript runs a reproducer as a maintainer would: outside sandcheck, from a fresh directory,
// with only PATH, the sandbox, env (its knobs: ROUNDS=3) and (when not "") the account to run it
// as.
func runScript(t *testing.T, script, sandbox, runAs string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + sandbox}, env...)
	if runAs != "" {
		cmd.Env = append(cmd.Env, "RUN_AS="+runAs)
	}
	got, err := cmd.CombinedOutput()
	recordScript(script, sandbox, env, exitCode(err))
	return exitCode(err), string(got)
}

// fsFindings are the fs-interplay findings pinned on srt 0.0.83 (protected files written from a
// subdirectory of a writable HOME; a read-denied directory the command can fill).
var fsFindings = []string{"fs-interplay/protected-bashrc-from-subdir", "fs-interplay/protected-git-hooks-from-subdir",
	"fs-interplay/protected-git-config-from-subdir", "fs-interplay/deny-read-dir-write", "globs/late", "globs/unanchored",
	"persistence/git-xdg-config", "persistence/own-binary"}

// TestReproStandaloneFS: `sandcheck repro` writes a reproducer for each fs-interplay and globs
// finding of the healthy srt, which exits 1 run outside sandcheck; and for each case of a release
// known-bad (the privilege cases on srt 0.0.65 as root, globs/existing on 0.0.34, the setup cases
// on 0.0.64), whose scripts
// exit 1 with that release and 0 with the release that fixed it.
func TestReproStandaloneFS(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt")
	out := reproKnown(t, "--target", "srt", "--label-filter", "bypass-fs-interplay || bypass-globs || bypass-persistence-git-xdg-config || bypass-persistence-own-binary")
	for _, id := range fsFindings {
		script := filepath.Join(out, "repro", reproscript.FileName("bypass/"+id))
		if code, got := runScript(t, script, srtPath(t), ""); code != 1 || !strings.Contains(got, "BUG: the sandboxed command") {
			t.Errorf("%s: exit %d, want 1\n%s", script, code, got)
		}
	}
	for _, b := range knownbad.Releases {
		out := t.TempDir()
		stdout, stderr, code := sandcheckExit(t, []string{"SANDCHECK_NPM_OFFLINE=1"}, "repro", "--target", b.Target+"@"+b.Open, "--user", b.User,
			"--label-filter", b.Labels, "-n", "1", "--out", out)
		if code != 1 {
			t.Fatalf("sandcheck repro on %s %s: exit %d, want 1\n%s\n%s", b.Target, b.Open, code, stdout, stderr)
		}
		for _, s := range b.Scenarios {
			script := filepath.Join(out, "repro", reproscript.FileName(s))
			for release, want := range map[string]int{b.Open: 1, b.Fixed: 0} {
				if code, got := runScript(t, script, srtRelease(release), ""); code != want {
					t.Errorf("%s with srt %s: exit %d, want %d\n%s", script, release, code, want, got)
				}
			}
		}
	}
}

// claudeReproducers: the standalone reproducers of Claude Code's configurations, written from the
// claude-settings run in out, agree with sandcheck's verdicts release by release, run as a
// maintainer would: each exits 1 with a release whose cell was non-enforcing and 0 with one whose
// cell was correct (the normal tier runs each script with one release of each kind it has; the
// long tier with every release). A failing configuration without a script is one whose trial
// cannot be given to Claude Code again as it was, and it says which; and a configuration Claude
// Code holds gets a script from the same journal that exits 0.
//
// The long tier also bisects the one configuration the two releases disagree on: in bypass mode
// 2.1.218 still lets the denied host through despite sandbox.network.strictAllowlist, 2.1.219
// refuses it (docs/reports/claude-code-bypass-approves-denied-hosts.md).
func claudeReproducers(t *testing.T, out string, row map[string]schema.Cell) {
	t.Run("reproducers", func(t *testing.T) {
		if isLong() {
			bisectNames(t, claudecode.Name, "claude-permissions-bypass-strict-allowlist", "2.1.218", "2.1.219", claudeVersions[1])
		}
		written, err := reproscript.WriteAll(filepath.Join(out, "journal.jsonl"), filepath.Join(out, "repro"))
		if err != nil {
			t.Fatal(err)
		}
		none := regexp.MustCompile(`fault|not a network trial|managed settings|the probe's own command`)
		ran := 0
		for _, w := range written {
			if w.Path == "" {
				if !none.MatchString(w.Why) {
					t.Errorf("%s: no reproducer: %s", w.Scenario, w.Why)
				}
				continue
			}
			tried := map[int]bool{}
			for _, v := range claudeVersions {
				want, ok := map[string]int{"non-enforcing": 1, "correct": 0}[claudeOutcome(row[v+"|"+w.Scenario])]
				if !ok || tried[want] && !isLong() {
					continue
				}
				tried[want] = true
				ran++
				if code, got := runScript(t, w.Path, claudeRelease(t, v), ""); code != want {
					t.Errorf("%s with Claude Code %s: exit %d, want %d (sandcheck's verdict)\n%s", w.Scenario, v, code, want, got)
				}
			}
		}
		var rec model.Record
		journal.Scan(filepath.Join(out, "journal.jsonl"), func(r model.Record) error {
			if strings.Contains(string(r.Evidence), `"claude-settings/permissions/allowed-tools"`) {
				rec = r
			}
			return nil
		})
		s, err := reproscript.Script(rec, "claude-settings/permissions/allowed-tools", "")
		if err != nil {
			t.Fatal(err)
		}
		held := filepath.Join(t.TempDir(), "allowed-tools.sh")
		os.WriteFile(held, []byte(s), 0o755)
		if code, got := runScript(t, held, claudeRelease(t, claudeVersions[0]), ""); code != 0 || !strings.Contains(got, "no bug") {
			t.Errorf("allowed-tools, which Claude Code holds: exit %d, want 0\n%s", code, got)
		}
		if ran < 10 {
			t.Errorf("only %d reproducer runs: the claude-settings run's findings did not get scripts", ran)
		}
	})
}

// claudeOutcome is a cell's one outcome, or "" when its trials disagree or it has none.
func claudeOutcome(c schema.Cell) string {
	if len(c.Outcomes) != 1 {
		return ""
	}
	for o := range c.Outcomes {
		return o
	}
	return ""
}

// claudeRelease is the native claude of a release in the npm cache.
func claudeRelease(t *testing.T, v string) string {
	t.Helper()
	in, ok := npmcache.New().Lookup(npmcache.Spec{Package: claudecode.Package, Version: v, Bin: "claude"})
	if !ok {
		t.Fatalf("claude-code %s is not in the npm cache", v)
	}
	return claudecode.Native(in.BinPath())
}

// TestReproStandaloneFSWrite: firejail 0.9.72 run by a normal user leaves the user's HOME
// writable (a known finding): `sandcheck repro` writes the reproducer of filesystem/outside/home,
// which, run outside sandcheck, exits 1 as that user and 0 as root, whose HOME firejail leaves
// read-only, and 0 as the user with --read-only=$HOME added; none leaves its canary behind.
func TestReproStandaloneFSWrite(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "firejail", "setpriv")
	out := reproKnown(t, "--target", "firejail", "--label-filter", "fs-outside")
	script := filepath.Join(out, "repro", reproscript.FileName("filesystem/outside/home"))
	firejail, err := exec.LookPath("firejail")
	if err != nil {
		t.Fatal(err)
	}
	for runAs, want := range map[string]int{model.DedicatedUser: 1, "root": 0} {
		code, got := runScript(t, script, firejail, runAs)
		if code != want {
			t.Errorf("%s as %s: exit %d, want %d\n%s", script, runAs, code, want, got)
		}
	}
	// The way around it the report names: --read-only=$HOME on firejail's command line.
	roHome := filepath.Join(reachableDir(t, "sandcheck-e2e-firejail-"), "firejail-ro-home")
	os.WriteFile(roHome, []byte("#!/bin/sh\nexec "+firejail+" --read-only=\"$HOME\" \"$@\"\n"), 0o755)
	if code, got := runScript(t, script, roHome, model.DedicatedUser); code != 0 || !strings.Contains(got, "Read-only file system") {
		t.Errorf("%s with --read-only=$HOME: exit %d, want 0, the write refused inside\n%s", script, code, got)
	}
	for _, home := range []string{"/root", "/home/" + model.DedicatedUser} {
		if left, _ := filepath.Glob(home + "/repro-canary-*"); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}

// TestReproStandaloneFSArgv: the fs-interplay and privilege findings of bubblewrap and firejail
// (their command lines carry the command): every scenario that fails in `sandcheck repro` gets a
// script that exits 1 run outside sandcheck (privilege as root); and the privilege scripts exit 0
// when the sandbox drops every capability (bwrap --cap-drop ALL, firejail --caps.drop=all), as
// the known findings say it then does.
func TestReproStandaloneFSArgv(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "bwrap", "firejail", "git", "findmnt")
	wrap := reachableDir(t, "sandcheck-e2e-capdrop-")
	for _, c := range []struct{ target, dropAll string }{{"bwrap", "--cap-drop ALL"}, {"firejail", "--caps.drop=all"}} {
		sandbox, err := exec.LookPath(c.target)
		if err != nil {
			t.Fatal(err)
		}
		dropped := filepath.Join(wrap, c.target+"-no-caps")
		os.WriteFile(dropped, []byte("#!/bin/sh\nexec "+sandbox+" "+c.dropAll+" \"$@\"\n"), 0o755)
		for _, run := range []struct{ user, labels string }{{"unprivileged", "bypass-fs-interplay"}, {"root", "bypass-privilege"}} {
			out := reproKnown(t, "--target", c.target, "--user", run.user, "--label-filter", run.labels)
			written, err := reproscript.WriteAll(filepath.Join(out, "journal.jsonl"), t.TempDir())
			if err != nil || len(written) == 0 {
				t.Fatalf("%s as %s: reproducers %v, %v", c.target, run.user, written, err)
			}
			runAs := ""
			if run.user == "root" {
				runAs = "root"
			}
			for _, w := range written {
				if w.Path == "" {
					t.Errorf("%s as %s: %s has no reproducer: %s", c.target, run.user, w.Scenario, w.Why)
					continue
				}
				if code, got := runScript(t, w.Path, sandbox, runAs); code != 1 {
					t.Errorf("%s as %s: %s: exit %d, want 1\n%s", c.target, run.user, w.Scenario, code, got)
				}
				if run.user == "root" {
					if code, got := runScript(t, w.Path, dropped, runAs); code != 0 {
						t.Errorf("%s %s as root: %s: exit %d, want 0\n%s", c.target, c.dropAll, w.Scenario, code, got)
					}
				}
			}
		}
	}
}

// TestReproStandaloneNewRepoHooks: srt 0.0.83 and Claude Code (both releases the tests run) protect
// .git/hooks only where a repository exists when the sandbox starts (a known finding of each):
// `sandcheck repro` writes the reproducer of filesystem/protected/git-hooks-new-repo, which, run
// outside sandcheck, exits 1: the hook the sandboxed command planted in newrepo/ runs when the
// user makes it a repository and commits.
func TestReproStandaloneNewRepoHooks(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "setpriv", "ip", "python3")
	const id = "filesystem/protected/git-hooks-new-repo"
	for _, c := range srtAndClaude(t) {
		script := filepath.Join(reproKnown(t, "--target", c.target, "--label-filter", "fs-protected"), "repro", reproscript.FileName(id))
		for _, build := range c.builds {
			if code, got := runScript(t, script, build, ""); code != 1 || !strings.Contains(got, "BUG: a hook the sandboxed command planted ran") {
				t.Errorf("%s with %s: exit %d, want 1\n%s", c.target, build, code, got)
			}
		}
	}
}

// TestReproStandaloneUnixSockets: plain bubblewrap and firejail let the command connect to a host
// unix socket in its view of the filesystem, directly and through io_uring (known findings of
// each): `sandcheck repro` writes the reproducers of bypass/unix-sockets/host-socket and
// uring-host-socket, which, run outside sandcheck with the sandbox the trial ran, exit 1: the
// line the sandboxed command sent reached the script's own socket where the trial's was.
func TestReproStandaloneUnixSockets(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "bwrap", "firejail", "python3", "setpriv")
	for _, target := range []string{"bwrap", "firejail"} {
		sandbox, err := exec.LookPath(target)
		if err != nil {
			t.Fatal(err)
		}
		out := reproKnown(t, "--target", target, "--label-filter", "bypass-unix-sockets")
		for _, id := range []string{"bypass/unix-sockets/host-socket", "bypass/unix-sockets/uring-host-socket"} {
			script := filepath.Join(out, "repro", reproscript.FileName(id))
			if code, got := runScript(t, script, sandbox, ""); code != 1 || !strings.Contains(got, "BUG: the sandboxed command reached the host's unix socket") {
				t.Errorf("%s: %s: exit %d, want 1\n%s", target, id, code, got)
			}
		}
	}
}

// TestReproStandaloneSessionTmp: srt 0.0.83 gives the command TMPDIR=/tmp/claude and lists it as
// writable, but does not make it (a known finding): `sandcheck repro` writes the reproducer of
// filesystem/workspace/tmpdir, which, run outside sandcheck where the host has no /tmp/claude
// (the e2e tests make none), exits 1.
func TestReproStandaloneSessionTmp(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "setpriv")
	if _, err := os.Stat("/tmp/claude"); err == nil {
		t.Fatal("/tmp/claude exists on this host: srt's TMPDIR is writable here, and the finding cannot show")
	}
	script := filepath.Join(reproKnown(t, "--target", "srt", "--label-filter", "fs-workspace"), "repro", reproscript.FileName("filesystem/workspace/tmpdir"))
	if code, got := runScript(t, script, srtPath(t), ""); code != 1 || !strings.Contains(got, "BUG: the sandbox gave the command TMPDIR=/tmp/claude") {
		t.Errorf("exit %d, want 1\n%s", code, got)
	}
}
