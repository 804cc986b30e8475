package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	"github.com/sandcheck/sandcheck/suites/bypass/knownbad"
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
// The io_uring one has no standalone script yet (the request goes through io_uring): `repro` says
// so, and the test checks that it does.
var publishedEscapes = []struct {
	scenario, labels, open, fixed, reached string
}{
	{"bypass/resolved-address/loopback", "bypass-resolved-address-loopback", "0.0.75", "0.0.76", "loopback@80 GET /repro/case"},
	{"bypass/matching/nul", "bypass-matching-nul", "0.0.42", "0.0.43", "denied@80 GET /repro/case"},
	{"bypass/unix-sockets/uring-host-socket", "bypass-unix-sockets-uring-host-socket", "0.0.44", "0.0.45", ""},
	{"bypass/other-egress/proxy-no-credentials", "bypass-other-egress-proxy-no-credentials", "0.0.54", "0.0.55", "allowed@80 GET /repro/case"},
}

// bisectNames: `bisect` from the last open release to the pinned one names the release that
// fixed it (the long tier: each bisect installs and runs about six releases).
func bisectNames(t *testing.T, labels, open, fixed string) {
	t.Helper()
	stdout, stderr, code := sandcheckExit(t, nil, "bisect", "--target", "srt", "--label-filter", labels,
		"--good", open, "--bad", "0.0.83", "-n", "5", "--out", t.TempDir(), "--json")
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
				bisectNames(t, e.labels, e.open, e.fixed)
			}
			out := t.TempDir()
			stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", "srt@"+e.open, "--label-filter", e.labels, "-n", "1", "--out", out)
			if code != 1 {
				t.Fatalf("sandcheck repro on srt %s: exit %d, want 1 (the escape)\n%s\n%s", e.open, code, stdout, stderr)
			}
			script := filepath.Join(out, "repro", reproscript.FileName(e.scenario))
			if e.reached == "" {
				if !strings.Contains(stdout, "`"+e.scenario+"`: none: ") {
					t.Errorf("the report does not say why %s has no reproducer:\n%s", e.scenario, stdout)
				}
				return
			}
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
	out := t.TempDir()
	stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", "srt", "--label-filter", "bypass-git", "-n", "1", "--out", out)
	if code != 0 || !strings.Contains(stdout, "known finding") {
		t.Fatalf("sandcheck repro: exit %d, want 0 (known findings only)\n%s\n%s", code, stdout, stderr)
	}
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

// srtRelease is the srt executable of a release in the npm cache.
func srtRelease(release string) string {
	return filepath.Join(npmcache.New().Root(), "@anthropic-ai", "sandbox-runtime@"+release, "node_modules", ".bin", "srt")
}

// runScript runs a reproducer as a maintainer would: outside sandcheck, from a fresh directory,
// with only PATH, the sandbox and (when not "") the account to run it as.
func runScript(t *testing.T, script, sandbox, runAs string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", script)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + sandbox}
	if runAs != "" {
		cmd.Env = append(cmd.Env, "RUN_AS="+runAs)
	}
	got, err := cmd.CombinedOutput()
	return exitCode(err), string(got)
}

// fsFindings are the fs-interplay findings pinned on srt 0.0.83 (protected files written from a
// subdirectory of a writable HOME).
var fsFindings = []string{"protected-bashrc-from-subdir", "protected-git-hooks-from-subdir", "protected-git-config-from-subdir"}

// TestReproStandaloneFS: `sandcheck repro` writes a reproducer for each fs-interplay finding of
// the healthy srt, which exits 1 run outside sandcheck; and for each privilege case on the
// release known-bad (srt 0.0.65 as root), whose scripts exit 1 with that release and 0 with the
// release that fixed it.
func TestReproStandaloneFS(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt")
	out := t.TempDir()
	stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", "srt", "--label-filter", "bypass-fs-interplay", "-n", "1", "--out", out)
	if code != 0 || !strings.Contains(stdout, "known finding") {
		t.Fatalf("sandcheck repro: exit %d, want 0 (known findings only)\n%s\n%s", code, stdout, stderr)
	}
	for _, id := range fsFindings {
		script := filepath.Join(out, "repro", reproscript.FileName("bypass/fs-interplay/"+id))
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
