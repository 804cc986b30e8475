package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/reproscript"
	_ "github.com/sandcheck/sandcheck/suites/bypass/bypassfaults" // registers fs-unmask
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// Known-bad faults' reproducers (issue 31): a fault that only puts a broken tool first on PATH,
// and breaks any run that tool is given, gets the same standalone scripts a real finding does.
// Run as a maintainer would, outside sandcheck, each script shows its finding with the same
// broken tool first on PATH (exit 1), and not with the healthy tool (exit 0), but for the cases
// the healthy release fails too, which are known findings (exit 1 either way).
//   - fs-unmask (bubblewrap loses every mount that hides or pins a path; told to break those below
//     /tmp, where the trials and the scripts both lay out) on srt: every fs-interplay,
//     persistence, globs and git case it flags; and on Claude Code, which runs the same broken
//     bubblewrap: its own settings files writable (the script drives Claude Code itself);
//   - fs-rw-root (bubblewrap binds / read-write) on bubblewrap itself: the writes outside;
//   - tty-shared (bubblewrap without --new-session) on srt: the command's TIOCSTI lands in the
//     caller's terminal, the script's own pseudo-terminal;
//   - pidns-shared (bubblewrap without --unshare-pid) on bubblewrap itself: the command kills a
//     process of its user's outside;
//   - netns-shared (bubblewrap without --unshare-net, firejail without --net=none) on bubblewrap
//     and on firejail themselves: every request that uses no proxy (TCP over IPv4 and IPv6, UDP,
//     ICMP, io_uring, DNS over UDP and TCP) reaches the script's fixture, and an abstract unix
//     socket of the script's network namespace is connectable (directly and through io_uring);
//     and on srt, which runs the broken bubblewrap: with an empty allow-list, the allowed host is
//     reached around the proxy.
func TestReproStandaloneFaults(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt", "setpriv")
	if !strings.HasPrefix(tmp, "/tmp/") {
		t.Fatalf("the trials' TMPDIR %s is not below /tmp, where the fault is told to break mounts", tmp)
	}
	healthyFails := slices.Clone(fsFindings)
	for _, id := range gitFindings {
		healthyFails = append(healthyFails, "git/"+id)
	}
	// The host unix sockets bubblewrap and firejail leave connectable, known findings of theirs.
	unixFindings := []string{"unix-sockets/host-socket", "unix-sockets/uring-host-socket"}
	netLabels := "bypass-other-egress || bypass-dns-udp || bypass-dns-tcp || bypass-unix-sockets"
	for _, c := range []struct {
		fault, target, sandbox, labels string
		min                            int      // scripts at least: the cases the fault flags
		known                          []string // the cases the healthy sandbox fails too (known findings)
	}{
		{"fs-unmask:under=/tmp", "srt", srtPath(t), "bypass-fs-interplay || bypass-persistence || bypass-globs || bypass-git || bypass-userns || bypass-nesting", 37, healthyFails},
		{"fs-unmask:under=/tmp", "claude-code", claudeRelease(t, claudecode.PinnedVersion), "bypass-persistence-claude-settings || bypass-persistence-claude-settings-local", 2, nil},
		{"fs-rw-root", "bwrap", "bwrap", "fs-outside", 1, nil},
		{"tty-shared", "srt", srtPath(t), "bypass-tty", 1, nil},
		{"pidns-shared", "bwrap", "bwrap", "bypass-signals", 1, nil},
		{"netns-shared", "bwrap", "bwrap", netLabels, 13, unixFindings},
		{"netns-shared", "firejail", "firejail", netLabels, 13, unixFindings},
		{"netns-shared", "srt", srtPath(t), "bypass-policy-semantics-empty-list-direct", 1, nil},
	} {
		t.Run(c.target+"/"+c.fault, func(t *testing.T) {
			broken := brokenTools(t, c.fault, c.target)
			out := t.TempDir()
			stdout, stderr, code := sandcheckExit(t, nil, "repro", "--target", c.target, "--fault", c.fault, "--label-filter", c.labels, "-n", "1", "--out", out)
			if code != 1 {
				t.Fatalf("sandcheck repro under %s: exit %d, want 1\n%s\n%s", c.fault, code, stdout, stderr)
			}
			written, err := reproscript.WriteAll(filepath.Join(out, "journal.jsonl"), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			for _, w := range written {
				if w.Path == "" {
					if w.Scenario != "filesystem/isolation" { // it sums up the checks, which have their own
						t.Errorf("%s: no reproducer: %s", w.Scenario, w.Why)
					}
					continue
				}
				ran++
				script, _ := os.ReadFile(w.Path)
				if !strings.Contains(string(script), "sandcheck's fault "+c.fault) {
					t.Errorf("%s: the script does not say the fault made its finding", w.Scenario)
				}
				if code, got := runScript(t, w.Path, c.sandbox, "", "PATH="+broken+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"); code != 1 {
					t.Errorf("%s with the broken tool: exit %d, want 1\n%s", w.Scenario, code, got)
				}
				want := 0
				if slices.Contains(c.known, strings.TrimPrefix(w.Scenario, "bypass/")) {
					want = 1
				}
				if code, got := runScript(t, w.Path, c.sandbox, ""); code != want {
					t.Errorf("%s with the healthy tool: exit %d, want %d\n%s", w.Scenario, code, want, got)
				}
			}
			if ran < c.min {
				t.Errorf("%d scripts run, want at least %d: the fault's findings did not get scripts", ran, c.min)
			}
		})
	}
}

// brokenTools is a directory with the broken tools fault puts first on PATH, made by the fault
// itself as for a trial of target; it fails the test for a fault that changes anything else
// there.
func brokenTools(t *testing.T, spec, target string) string {
	t.Helper()
	f, params, err := faults.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := &faults.Injection{Dir: reachableDir(t, "sandcheck-broken-"), Params: params, Target: target}
	if err := f.Apply(in); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Cleanup)
	c := in.Changes()
	if f.Portable == nil || !f.Portable(params) || len(c.ToolsOnly()) == 0 {
		t.Fatalf("%s does not only put tools that break any run first on PATH: %+v", spec, c)
	}
	return strings.Join(c.PathFirst, ":")
}
