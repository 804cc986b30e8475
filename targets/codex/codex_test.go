package codex

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

func TestOverrides(t *testing.T) {
	cfg := Config(targets.Policy{WritablePaths: []string{"/w"}})
	got := strings.Join(Overrides(cfg), " ")
	want := `-c sandbox_mode="workspace-write" -c sandbox_workspace_write.exclude_slash_tmp=true -c sandbox_workspace_write.exclude_tmpdir_env_var=false ` +
		`-c sandbox_workspace_write.network_access=false -c sandbox_workspace_write.writable_roots=["/w"]`
	if got != want {
		t.Errorf("overrides\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(Overrides(Config(targets.Policy{})), " "); got != `-c sandbox_mode="read-only"` {
		t.Errorf("no writable paths: %s", got)
	}
	// The proxy shape: a permissions profile; tables keyed by paths and domain names are inline
	// tables, since -c splits its key at dots.
	// The working directory, writable, is the profile's project root as well (as Codex's own
	// profiles write it): Codex keeps .codex and .git read-only only under project roots.
	got = strings.Join(Overrides(ProxyConfig(targets.Policy{WritablePaths: []string{"/w"},
		AllowedHosts: []string{"*.sandcheck.test"}, DeniedHosts: []string{"denied.sandcheck.test"}}, "/w/sub")), " ")
	want = `-c default_permissions="sandcheck" -c features.network_proxy=true ` +
		`-c permissions.sandcheck.filesystem={"/w"="write",":project_roots"={"."="write"},":root"="read",":tmpdir"="write"} ` +
		`-c permissions.sandcheck.network.allow_local_binding=true ` +
		`-c permissions.sandcheck.network.domains={"*.sandcheck.test"="allow","denied.sandcheck.test"="deny"} ` +
		`-c permissions.sandcheck.network.enabled=true`
	if got != want {
		t.Errorf("proxy overrides\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(Overrides(ProxyConfig(targets.Policy{WritablePaths: []string{"/w"}}, "/elsewhere")), " "); strings.Contains(got, "project_roots") {
		t.Errorf("a working directory the policy does not make writable became a writable project root: %s", got)
	}
}

// The network setting: proxy by default, deny-all by name, anything else refused with the key.
func TestNetworkSetting(t *testing.T) {
	for in, want := range map[string]string{"": NetworkProxy, "proxy": NetworkProxy, "deny-all": NetworkDenyAll} {
		if got, err := mode(in); err != nil || got != want {
			t.Errorf("mode(%q) = %q, %v", in, got, err)
		}
	}
	if err := targets.CheckSettings(Name, map[string]any{"network": "none"}); err == nil || !strings.Contains(err.Error(), "settings.network") {
		t.Errorf("network=none: %v", err)
	}
}

// asTrial registers a test that runs codex itself with the leftover ledger, as every trial is
// (fixtures/users): codex run as root makes /tmp/codex-daemon-0 (hard-coded /tmp) and leaves it,
// and the last registered run to end removes it while empty.
func asTrial(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		return // the ledger lives in /run; another account's runtime directory is its own
	}
	root, err := users.Resolve(model.UserRoot)
	if err != nil {
		t.Fatal(err)
	}
	l, err := root.Begin(strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.End() })
}

// TestRealCodex runs a command under the real `codex sandbox` with the adapter's overrides: the
// workspace and the session's TMPDIR are writable, /tmp and the rest are not, and the network
// namespace is not the host's.
func TestRealCodex(t *testing.T) {
	asTrial(t)
	p, err := Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	if home, _ := os.UserHomeDir(); home == "" || strings.HasPrefix(home, "/tmp") {
		skip.Missing(t, "HOME=%q: Codex needs a HOME outside /tmp", home)
	}
	tg, err := targets.New(Name, map[string]string{"path": p, "network": NetworkDenyAll})
	if err != nil {
		t.Fatal(err)
	}
	if !targets.DenyAll(tg) || targets.Has(tg, model.CapDenyRead) || !targets.Has(tg, model.CapWritablePaths) {
		t.Errorf("capabilities %v, reach %v", tg.Capabilities(), tg.Reach())
	}
	if !strings.HasPrefix(tg.Version(), "codex-cli ") {
		t.Errorf("version %q", tg.Version())
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	script := `readlink /proc/self/ns/net; echo hi > ok && echo WROTE; echo t > "$TMPDIR/t" && echo TMP-OK; echo x > /etc/sandcheck-codex-test 2>/dev/null && echo ESCAPED-ETC;
echo x > /tmp/sandcheck-codex-test 2>/dev/null && echo ESCAPED-TMP; echo x > ` + filepath.Join(dir, "outside") + ` 2>/dev/null && echo ESCAPED-PARENT; true`
	run := func(patches ...func(map[string]any)) string {
		s := &targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(), Command: []string{"sh", "-c", script},
			Policy: targets.Policy{WritablePaths: []string{ws}}, Patches: patches}
		inv, err := tg.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
		cmd.Env, cmd.Dir = inv.Env, inv.Dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", inv.Argv, err, out)
		}
		t.Logf("argv %q\n%s", inv.Argv, out)
		return string(out)
	}
	o := run()
	if strings.Contains(o, hostNet) || !strings.Contains(o, "net:[") {
		t.Errorf("network namespace is the host's (%s):\n%s", hostNet, o)
	}
	if strings.Contains(o, "ESCAPED") || !strings.Contains(o, "WROTE") || !strings.Contains(o, "TMP-OK") {
		t.Errorf("filesystem policy not as configured:\n%s", o)
	}
	os.Remove("/etc/sandcheck-codex-test")
	os.Remove("/tmp/sandcheck-codex-test")
	// The seam the netns-shared fault uses: network_access=true shares the host's network.
	o = run(func(c map[string]any) { c["sandbox_workspace_write"].(map[string]any)["network_access"] = true })
	if !strings.Contains(o, hostNet) {
		t.Errorf("network_access=true: want the host's namespace %s:\n%s", hostNet, o)
	}
}

// A build without `codex sandbox` cannot be driven: the adapter says so, once, and trials
// report not-applicable rather than a sandbox failure. The stand-ins print the command lists of
// the real 0.1.2505291658 and 0.171.0 help screens.
func TestUndrivableWithoutSandboxCommand(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "codex-old")
	os.WriteFile(old, []byte("#!/bin/sh\nprintf 'Commands:\\n  exec   Run Codex non-interactively\\n  mcp    Experimental\\n  proto  Run the Protocol\\n  debug  Internal debugging commands\\n'\n"), 0o755)
	tg, err := New(old)
	if err != nil {
		t.Fatal(err)
	}
	if why := tg.Undrivable(); !strings.Contains(why, "no `codex sandbox` command") {
		t.Fatalf("undrivable = %q", why)
	}
	// 0.171.0's help and features list (`codex features list`), one stand-in for both.
	current := filepath.Join(dir, "codex-new")
	os.WriteFile(current, []byte("#!/bin/sh\nprintf 'Commands:\\n  exec              Run Codex\\n  sandbox           Run commands within a Codex-provided sandbox\\n'\n"+
		"printf 'network_proxy                            experimental       false\\n'\n"), 0o755)
	if tg, _ := New(current); tg.Undrivable() != "" {
		t.Fatalf("a build with `codex sandbox` is undrivable: %q", tg.Undrivable())
	}
	// A build with the sandbox but not the proxy: the proxy shape cannot drive it, and says
	// which shape can; the deny-all shape drives it.
	noProxy := filepath.Join(dir, "codex-noproxy")
	os.WriteFile(noProxy, []byte("#!/bin/sh\nprintf 'Commands:\\n  sandbox           Run commands within a Codex-provided sandbox\\n'\n"), 0o755)
	if tg, _ := New(noProxy); !strings.Contains(tg.Undrivable(), "does not list network_proxy") || !strings.Contains(tg.Undrivable(), "deny-all") {
		t.Fatalf("a build without the proxy feature: %q", tg.Undrivable())
	}
	if tg, _ := NewWith(noProxy, NetworkDenyAll); tg.Undrivable() != "" {
		t.Fatalf("deny-all shape on a build without the proxy: %q", tg.Undrivable())
	}
	broken := filepath.Join(dir, "codex-broken")
	os.WriteFile(broken, []byte("#!/bin/sh\necho 'node: not found' >&2; exit 127\n"), 0o755)
	if tg, _ := New(broken); !strings.Contains(tg.Undrivable(), "node: not found") {
		t.Fatalf("broken build: %q", tg.Undrivable())
	}
}

// TestRealCodexProxy: the proxy shape on the real Codex: the command gets Codex's proxy in its
// environment and nothing else of the network, the workspace and TMPDIR are writable, /tmp
// and the rest are not. The network scenario judges the policy itself, against the fixture.
func TestRealCodexProxy(t *testing.T) {
	asTrial(t)
	p, err := Locate("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	if home, _ := os.UserHomeDir(); home == "" || strings.HasPrefix(home, "/tmp") {
		skip.Missing(t, "HOME=%q: Codex needs a HOME outside /tmp", home)
	}
	tg, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if why := tg.Undrivable(); why != "" {
		t.Fatalf("pinned codex has no proxy: %s", why)
	}
	if targets.DenyAll(tg) || !targets.Has(tg, model.CapProxyAllowList) {
		t.Errorf("capabilities %v, reach %v", tg.Capabilities(), tg.Reach())
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	script := `echo "proxy=$HTTP_PROXY all=$ALL_PROXY"; echo hi > ok && echo WROTE; echo t > "$TMPDIR/t" && echo TMP-OK;
echo x > /tmp/sandcheck-codex-test 2>/dev/null && echo ESCAPED-TMP; echo x > ` + filepath.Join(dir, "outside") + ` 2>/dev/null && echo ESCAPED-PARENT; true`
	s := &targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(), Command: []string{"sh", "-c", script},
		Policy: targets.Policy{WritablePaths: []string{ws}, AllowedHosts: []string{"allowed.sandcheck.test"}}}
	inv, err := tg.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env, cmd.Dir = inv.Env, inv.Dir
	out, err := cmd.CombinedOutput()
	os.Remove("/tmp/sandcheck-codex-test")
	if err != nil {
		t.Fatalf("%v: %v\n%s", inv.Argv, err, out)
	}
	o := string(out)
	if !regexp.MustCompile(`proxy=http://127\.0\.0\.1:\d+ all=socks5h://127\.0\.0\.1:\d+`).MatchString(o) {
		t.Errorf("no proxy in the command's environment:\n%s", o)
	}
	if strings.Contains(o, "ESCAPED") || !strings.Contains(o, "WROTE") || !strings.Contains(o, "TMP-OK") {
		t.Errorf("filesystem policy not as configured:\n%s", o)
	}
}

// The pinned codex lists its sandbox command.
func TestPinnedCodexIsDrivable(t *testing.T) {
	tg, err := New("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	if why := tg.Undrivable(); why != "" {
		t.Fatalf("pinned codex %s: %s", tg.Version(), why)
	}
}

// Releases up to 0.133 take a platform under `codex sandbox` (`codex sandbox linux -- CMD`) and
// refuse a command in its place ("unrecognized subcommand"): the adapter asks the build's own
// `codex sandbox --help` and speaks its form. The stand-in prints 0.131.0's command lists.
func TestSandboxPlatformSubcommand(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "codex-0.131")
	os.WriteFile(old, []byte(`#!/bin/sh
case "$1 $2" in
"sandbox --help") printf 'Commands:\n  macos    Run a command under Seatbelt\n  linux    Run a command under the Linux sandbox\n  windows  Run a command under Windows restricted token\n' ;;
"features list") printf 'network_proxy  experimental  false\n' ;;
*) printf 'Commands:\n  sandbox  Run commands within a Codex-provided sandbox\n' ;;
esac
`), 0o755)
	current := filepath.Join(dir, "codex-0.171")
	os.WriteFile(current, []byte(`#!/bin/sh
case "$1 $2" in
"sandbox --help") printf 'Usage: codex sandbox [OPTIONS] [COMMAND]...\n\nCommands:\n  uninstall  Remove the legacy Windows sandbox\n' ;;
"features list") printf 'network_proxy  experimental  false\n' ;;
*) printf 'Commands:\n  sandbox  Run commands within a Codex-provided sandbox\n' ;;
esac
`), 0o755)
	for exe, want := range map[string]string{old: "sandbox linux -c", current: "sandbox -c"} {
		tg, err := New(exe)
		if err != nil {
			t.Fatal(err)
		}
		if why := tg.Undrivable(); why != "" {
			t.Fatalf("%s: undrivable: %s", exe, why)
		}
		inv, err := tg.Prepare(&targets.Session{Dir: dir, Workspace: dir, Env: []string{"HOME=/root"}, Command: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(inv.Argv, " "); !strings.Contains(got, " "+want) {
			t.Errorf("%s: argv %s, want %q", filepath.Base(exe), got, want)
		}
	}
}

// TestClaimsFromTheirReleases: Codex lets an allow-listed IP literal through its guard against
// local and private addresses from 0.146.0; 0.131.0 to 0.145.0 refuse it too (HTTP 502, SOCKS5
// reply 5: measured here on every release, bypass/private-addresses's controls), so they cannot
// express that policy, and do not claim private-guard: the class is not-applicable there, never
// allowed-blocked.
func TestClaimsFromTheirReleases(t *testing.T) {
	for version, want := range map[string]bool{"0.131.0": false, "0.145.0": false, "0.146.0": true, "0.171.0": true} {
		checkClaim(t, version, model.CapPrivateGuard, want)
	}
	// HTTPS read inside the tunnel: 0.131.0 and 0.132.0 refuse every CONNECT under reading methods
	// only ("blocked-by-mitm-required"), 0.133.0 to 0.141.0 intercept it but their upstream leg
	// trusts no CA the host gives them (HTTP 502 for the fixture's allowed host), measured on each.
	for version, want := range map[string]bool{"0.131.0": false, "0.141.0": false, "0.142.0": true, "0.171.0": true} {
		checkClaim(t, version, model.CapHTTPSInterception, want)
	}
}

// checkClaim: a build of version claims capability c, or not.
func checkClaim(t *testing.T, version string, c model.Capability, want bool) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho codex-cli "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tg, err := New(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got := targets.Has(tg, c); got != want {
		t.Errorf("codex %s claims %s: %v, want %v", version, c, got, want)
	}
	if why := targets.Unclaimed(tg, c); !want && !strings.HasPrefix(why, "codex "+version+" does not claim "+string(c)+" (codex claims it from 0.14") {
		t.Errorf("codex %s: %q", version, why)
	}
}

// TestHomeUnderTmp: Codex keeps its state in $HOME/.codex and will not keep it under its temp
// dir; the adapter gives it a TMPDIR of the session's own, so a HOME elsewhere under /tmp (a
// trial's fake HOME) is Codex's to use (measured: `codex sandbox` runs, making HOME/.codex). Only a
// HOME under the TMPDIR Codex sees is refused.
func TestHomeUnderTmp(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "codex")
	os.WriteFile(exe, []byte("#!/bin/sh\nprintf 'Commands:\\n  sandbox  Run commands within a Codex-provided sandbox\\n'\nprintf 'network_proxy  experimental  false\\n'\n"), 0o755)
	tg, err := New(exe)
	if err != nil {
		t.Fatal(err)
	}
	s := &targets.Session{Dir: dir, Workspace: dir, Env: []string{"HOME=" + filepath.Join(dir, "fakehome")}, Command: []string{"true"}}
	if _, err := tg.Prepare(s); err != nil {
		t.Errorf("HOME under /tmp, outside the session's TMPDIR: %v", err)
	}
	s.Env = []string{"HOME=" + filepath.Join(dir, "codex-tmp", "home")}
	if _, err := tg.Prepare(s); err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("HOME under the session's TMPDIR: %v, want a refusal naming TMPDIR", err)
	}
}
