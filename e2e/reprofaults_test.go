package e2e

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/suites"
	_ "github.com/sandcheck/sandcheck/suites/bypass/bypassfaults" // registers fs-unmask
	"github.com/sandcheck/sandcheck/suites/bypass/knownbad"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// The host unix sockets bubblewrap and firejail leave connectable, known findings of theirs; and
// the labels of netns-shared's cases.
var (
	unixFindings = []string{"unix-sockets/host-socket", "unix-sockets/uring-host-socket"}
	netLabels    = "bypass-other-egress || bypass-dns-udp || bypass-dns-tcp || bypass-unix-sockets"
)

// toolFaultScripts are the known-bad faults that only put broken tools first on PATH, as
// TestReproStandaloneFaults runs their scripts: min scripts at least (the cases the fault flags),
// and known, the cases the healthy sandbox fails too (known findings, exit 1 either way).
var toolFaultScripts = []struct {
	fault, target, labels string
	min                   int
	known                 []string
}{
	{"fs-unmask:under=/tmp", "srt", "bypass-fs-interplay || bypass-persistence || bypass-globs || bypass-git || bypass-userns || bypass-nesting", 37,
		srtFSFindings()},
	{"fs-unmask:under=/tmp", "claude-code", "bypass-persistence-claude-settings || bypass-persistence-claude-settings-local", 2, nil},
	{"fs-rw-root", "bwrap", "fs-outside", 1, nil},
	{"fs-rw-root", "srt", "fs-outside", 3, nil},
	{"tty-shared", "srt", "bypass-tty", 1, nil},
	{"pidns-shared", "bwrap", "bypass-signals", 1, nil},
	{"netns-shared", "bwrap", netLabels, 13, unixFindings},
	{"netns-shared", "firejail", netLabels, 13, unixFindings},
	{"netns-shared", "srt", "bypass-policy-semantics-empty-list-direct || channel-direct || channel-dns", 3, nil},
	{"bridge-absent", "srt", "channel-http || channel-https || channel-socks", 3, nil},
	{"bridge-late", "srt", "channel-http || channel-https || channel-socks", 3, nil},
}

// sumsUp says whether a scenario sums up others, whose scripts reproduce it: the filesystem
// family's overall one, and the network family's properties (its channels have scripts).
func sumsUp(scenario string) bool {
	return scenario == "filesystem/isolation" || strings.HasPrefix(scenario, "network/") && !strings.HasPrefix(scenario, "network/channel/")
}

// srtFSFindings are srt's pinned filesystem findings, the git class's among them.
func srtFSFindings() []string {
	out := slices.Clone(fsFindings)
	for _, id := range gitFindings {
		out = append(out, "git/"+id)
	}
	return out
}

// sandboxOf is the sandbox a script of target's runs: srt and Claude Code as the tests pin them,
// bubblewrap and firejail from PATH.
func sandboxOf(t *testing.T, target string) string {
	switch target {
	case "srt":
		return srtPath(t)
	case "claude-code":
		return claudeRelease(t, claudecode.PinnedVersion)
	}
	return target
}

// Known-bad faults' reproducers (issue 31): a fault that only puts a broken tool first on PATH,
// and breaks any run that tool is given, gets the same standalone scripts a real finding does.
// Run as a maintainer would, outside sandcheck, each script shows its finding with the same
// broken tool first on PATH (exit 1), and not with the healthy tool (exit 0), but for the cases
// the healthy release fails too, which are known findings (exit 1 either way).
//   - fs-unmask (bubblewrap loses every mount that hides or pins a path; told to break those below
//     /tmp, where the trials and the scripts both lay out) on srt: every fs-interplay,
//     persistence, globs and git case it flags; and on Claude Code, which runs the same broken
//     bubblewrap: its own settings files writable (the script drives Claude Code itself);
//   - fs-rw-root (bubblewrap binds / read-write) on bubblewrap itself and on srt, which runs the
//     same broken bubblewrap: the writes outside;
//   - tty-shared (bubblewrap without --new-session) on srt: the command's TIOCSTI lands in the
//     caller's terminal, the script's own pseudo-terminal;
//   - pidns-shared (bubblewrap without --unshare-pid) on bubblewrap itself: the command kills a
//     process of its user's outside;
//   - netns-shared (bubblewrap without --unshare-net, firejail without --net=none) on bubblewrap
//     and on firejail themselves: every request that uses no proxy (TCP over IPv4 and IPv6, UDP,
//     ICMP, io_uring, DNS over UDP and TCP) reaches the script's fixture, and an abstract unix
//     socket of the script's network namespace is connectable (directly and through io_uring);
//     and on srt, which runs the broken bubblewrap: with an empty allow-list, the allowed host is
//     reached around the proxy, and the network family's direct and DNS channels reach the
//     denied host and the resolver (the seed's second outcome);
//   - bridge-absent and bridge-late (srt's relay inside the sandbox never starts, or starts
//     after srt's readiness wait) on srt: the network family's proxy channels find nothing on
//     the proxy port (the seed's first outcome, a dead proxy).
func TestReproStandaloneFaults(t *testing.T) {
	requireSandbox(t)
	skip.UnlessTools(t, "run `make deps-test`", "git", "findmnt", "setpriv")
	if !strings.HasPrefix(tmp, "/tmp/") {
		t.Fatalf("the trials' TMPDIR %s is not below /tmp, where the fault is told to break mounts", tmp)
	}
	for _, c := range toolFaultScripts {
		t.Run(c.target+"/"+c.fault, func(t *testing.T) {
			broken := brokenTools(t, c.fault, c.target)
			written := faultScripts(t, c.target, c.fault, c.labels)
			ran := 0
			for _, w := range written {
				if w.Path == "" {
					if !sumsUp(w.Scenario) {
						t.Errorf("%s: no reproducer: %s", w.Scenario, w.Why)
					}
					continue
				}
				ran++
				script, _ := os.ReadFile(w.Path)
				if !strings.Contains(string(script), "sandcheck's fault "+c.fault) {
					t.Errorf("%s: the script does not say the fault made its finding", w.Scenario)
				}
				if code, got := runScript(t, w.Path, sandboxOf(t, c.target), "", "PATH="+broken+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"); code != 1 {
					t.Errorf("%s with the broken tool: exit %d, want 1\n%s", w.Scenario, code, got)
				}
				want := 0
				if slices.Contains(c.known, strings.TrimPrefix(w.Scenario, "bypass/")) {
					want = 1
				}
				if code, got := runScript(t, w.Path, sandboxOf(t, c.target), ""); code != want {
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

// noReproducer are the known-bad faults whose findings get no standalone script, by target and
// fault name, and why: what they change is sandcheck's own, which a script for a maintainer
// cannot carry, or their finding is no sandbox's.
var noReproducer = map[string]string{
	"srt/bad-proxy": "its variants' cases (bug=admin, ip-literals, the proxy-semantics bugs, nocanon+rebind, resolve-first, " +
		"host-forwarded) are requests the scripts do not send as the trial did: tampering, pipelining, a parent proxy's, a query",
	"srt/srt-seccomp": "mode=socket-only's seccomp helper is a program of the trial's that runs sandcheck's binary; it stands in " +
		"for srt 0.0.44's filter, whose own uring-host-socket script TestReproStandalone runs (exit 1 with 0.0.44, 0 with 0.0.45)",
	"srt/bridge-mid":           "its relay waits for the probe's first request, which sandcheck's probe marks",
	"srt/host-bridge-dies":     "its bridge dies once the probe's first request is done, which sandcheck's probe marks",
	"srt/bridge-flaky":         "its failure is a rate: one session of a script shows it with probability p only",
	"srt/policy-allows-denied": "the policy itself allows the denied host (the token's sanity check): no sandbox's bug",
	"srt/fs-drop-deny-read":    "its bubblewrap drops the mount over the trial's own denied path, which a script's is not",
	"srt/degraded-no-proxy":    "it stands a shell script of sandcheck's in for srt",
}

// knownBadFaults are every family's known-bad faults as target/fault spec (a fault any target's
// seams reach is run on the default target, srt), each once.
func knownBadFaults(t *testing.T) []string {
	all, err := suites.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sc := range all {
		for _, kb := range sc.KnownBads {
			if kb.Fault == "" {
				continue
			}
			k := cmp.Or(kb.Target, "srt") + "/" + kb.Fault
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// TestEveryKnownBadFaultReproduced (issue 31): every known-bad fault of every family either has
// its findings' scripts run by a test here, outside sandcheck (toolFaultScripts,
// srtSettingsFaults, codexSettingsFaults, proxyFaultScripts; a parameterised variant counts, fs-unmask told where to
// break), or is listed in noReproducer with the reason; and a fault listed there changes more
// than tools or settings, or needs the trial's fixture, so the reason holds.
func TestEveryKnownBadFaultReproduced(t *testing.T) {
	tested := map[string][]string{} // target: fault specs whose scripts a test runs
	for _, c := range toolFaultScripts {
		tested[c.target] = append(tested[c.target], c.fault)
	}
	for _, c := range srtSettingsFaults {
		tested["srt"] = append(tested["srt"], c.fault)
	}
	for _, c := range codexSettingsFaults {
		tested["codex"] = append(tested["codex"], c.fault)
	}
	for _, c := range proxyFaultScripts {
		tested["srt"] = append(tested["srt"], c.fault)
	}
	kbs := knownBadFaults(t)
	if len(kbs) < len(knownbad.Faults) {
		t.Fatalf("%d known-bad faults in the catalogue, fewer than the bypass family's %d alone", len(kbs), len(knownbad.Faults))
	}
	for _, k := range kbs {
		target, spec, _ := strings.Cut(k, "/")
		if slices.ContainsFunc(tested[target], func(s string) bool { return s == spec || strings.HasPrefix(s, spec+":") }) {
			continue
		}
		name, _, _ := strings.Cut(spec, ":")
		why, listed := noReproducer[target+"/"+name]
		if !listed {
			t.Errorf("%s on %s: no test runs its findings' scripts, and noReproducer does not say why", spec, target)
			continue
		}
		f, params, err := faults.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		in := &faults.Injection{Dir: t.TempDir(), MarkDir: t.TempDir(), Params: params, Target: target, ProbeBin: bin}
		if err := f.Apply(in); err != nil {
			continue // it needs the trial's fixture: sandcheck's own parts
		}
		c := in.Changes()
		if c.SettingsOnly() || c.ProxyOnly() || f.Portable != nil && f.Portable(params) && len(c.ToolsOnly()) > 0 {
			t.Errorf("%s on %s changes only what a script carries, yet noReproducer says %q", spec, target, why)
		}
		in.Cleanup()
	}
}
