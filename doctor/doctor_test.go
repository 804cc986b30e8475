package doctor

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
)

var fixedNow = func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }

// fakeRun answers by the executable's base name; git by scope. It records every argv.
type fakeRun struct {
	out   map[string]string
	calls [][]string
}

func (f *fakeRun) run(argv ...string) (string, error) {
	f.calls = append(f.calls, argv)
	name := filepath.Base(argv[0])
	if name == "git" {
		for i, a := range argv {
			if a == "--file" && i+1 < len(argv) {
				name = "git " + filepath.Base(argv[i+1])
			}
		}
	}
	if out, ok := f.out[name]; ok {
		return out, nil
	}
	return "", errors.New("exit status 1")
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func TestDebian12(t *testing.T) {
	root := fixture(t, "debian12")
	fr := &fakeRun{out: map[string]string{
		"bwrap":          "bubblewrap 0.8.0\n",
		"socat":          "socat by Gerhard Rieger and contributors - see www.dest-unreach.org\nsocat version 1.7.4.4 on 06 Nov 2022 08:15:51\n   running on Linux version #1 SMP, release 6.1.0-28-amd64\n",
		"rg":             "ripgrep 13.0.0\n-SIMD -AVX (compiled)\n",
		"git .gitconfig": "http://gituser:gitpass@gitproxy.corp.example:8080\n",
		"node":           "v18.19.0\n",
	}}
	f := Collect(Options{
		Root: root,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin:relative/bin:/mnt/c/bin",
			"HOME=/home/dev",
			"HTTPS_PROXY=http://user:secret@proxy.corp.example:3128",
			"no_proxy=localhost,127.0.0.1",
			"ALL_PROXY=socks5://u:p@10.0.0.1:1080/",
			"GOPROXY_NOT=ignored",
		},
		Run:            fr.run,
		Now:            fixedNow,
		SandboxVersion: "@anthropic-ai/sandbox-runtime@0.0.66",
	})
	check(t, "kernel", f.Kernel, "6.1.0-28-amd64")
	check(t, "distro", f.Distro, "Debian GNU/Linux 12 (bookworm)")
	check(t, "wsl_version", f.WSLVersion, "")
	check(t, "wsl_networking_mode", f.WSLNetworkingMode, "")
	if f.WSLInterop {
		t.Error("wsl_interop = true on plain Debian")
	}
	check(t, "bwrap", f.Bwrap, "0.8.0")
	check(t, "socat", f.Socat, "1.7.4.4")
	check(t, "rg", f.Rg, "13.0.0")
	check(t, "node", f.Node, "v18.19.0")
	check(t, "sandbox", f.Sandbox, "@anthropic-ai/sandbox-runtime@0.0.66")
	check(t, "arch", f.Arch, "x86_64")
	check(t, "paths[bwrap]", f.Paths["bwrap"], "/usr/bin/bwrap")
	// /mnt/c here is an ext4 disk on a host that is not WSL: no interop note.
	check(t, "paths[node]", f.Paths["node"], "/mnt/c/bin/node")
	check(t, "paths[srt]", f.Paths["srt"], Missing)
	check(t, "paths[wslinfo]", f.Paths["wslinfo"], Missing)
	wantUserns := map[string]string{
		"kernel.unprivileged_userns_clone":             "1",
		"user.max_user_namespaces":                     "63704",
		"kernel.apparmor_restrict_unprivileged_userns": Missing,
	}
	if !reflect.DeepEqual(f.Userns, wantUserns) {
		t.Errorf("userns = %v, want %v", f.Userns, wantUserns)
	}
	wantProxy := map[string]string{
		"HTTPS_PROXY": "http://REDACTED@proxy.corp.example:3128",
		"no_proxy":    "localhost,127.0.0.1",
		"ALL_PROXY":   "socks5://REDACTED@10.0.0.1:1080/",
	}
	if !reflect.DeepEqual(f.ProxyEnv, wantProxy) {
		t.Errorf("proxy_env = %v, want %v", f.ProxyEnv, wantProxy)
	}
	home := f.CurlRC["~/.curlrc"]
	if !home.Exists {
		t.Error("~/.curlrc not found")
	}
	wantLines := []string{
		"proxy = http://REDACTED@proxy.corp.example:3128",
		"proxy-user = REDACTED",
		"noproxy = localhost,127.0.0.1",
		"x = socks5h://127.0.0.1:1080",
	}
	if !reflect.DeepEqual(home.ProxyLines, wantLines) {
		t.Errorf("~/.curlrc proxy lines = %q, want %q", home.ProxyLines, wantLines)
	}
	if f.CurlRC["/etc/curlrc"].Exists {
		t.Error("/etc/curlrc reported present")
	}
	wantGit := map[string]string{"global": "http://REDACTED@gitproxy.corp.example:8080", "system": "unset"}
	if !reflect.DeepEqual(f.GitProxy, wantGit) {
		t.Errorf("git_proxy = %v, want %v", f.GitProxy, wantGit)
	}
	check(t, "pid1_seccomp", f.PID1Seccomp, "0 disabled")
	if !f.CollectedAt.Equal(fixedNow()) {
		t.Errorf("collected_at = %v", f.CollectedAt)
	}
	// Commands run the executable inside Root, and git reads the root's files, not the host's.
	for _, c := range fr.calls {
		if !strings.HasPrefix(c[0], root+"/") {
			t.Errorf("ran %q outside the fixture root", c)
		}
		if filepath.Base(c[0]) == "git" && (c[2] != "--file" || !strings.HasPrefix(c[3], root+"/")) {
			t.Errorf("git asked about the host's config: %q", c)
		}
	}
	// No secret survives anywhere in the JSON or the table.
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(f); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&buf, f); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"secret", "s3cret", "hunter2", "gitpass", "u:p@"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("output leaks %q:\n%s", secret, buf.String())
		}
	}
}

func TestWSL2(t *testing.T) {
	root := fixture(t, "wsl2")
	fr := &fakeRun{out: map[string]string{
		"wslinfo": "mirrored\n",
		"bwrap":   "bubblewrap 0.9.0\n",
		"socat":   "socat by Gerhard Rieger and contributors - see www.dest-unreach.org\nsocat version 1.8.0.0 on 08 Apr 2024 21:50:06\n",
		"node":    "v22.11.0\r\n",
		"rg":      "ripgrep 14.1.1\n",
	}}
	f := Collect(Options{
		Root: root,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin:/mnt/c/Program Files/nodejs:/mnt/c/WINDOWS/system32",
			"HOME=/home/dev",
			"WSL_DISTRO_NAME=Ubuntu",
		},
		Run: fr.run,
		Now: fixedNow,
	})
	check(t, "kernel", f.Kernel, "6.6.87.2-microsoft-standard-WSL2")
	check(t, "distro", f.Distro, "Ubuntu 24.04.1 LTS")
	check(t, "wsl_version", f.WSLVersion, "2")
	check(t, "wsl_networking_mode", f.WSLNetworkingMode, "mirrored")
	if !f.WSLInterop {
		t.Error("wsl_interop = false with WSLInterop-late registered")
	}
	check(t, "bwrap", f.Bwrap, "0.9.0")
	check(t, "socat", f.Socat, "1.8.0.0")
	check(t, "node", f.Node, "v22.11.0")
	check(t, "rg", f.Rg, "14.1.1")
	check(t, "sandbox", f.Sandbox, Missing)
	check(t, "paths[node]", f.Paths["node"], "/mnt/c/Program Files/nodejs/node ["+InteropNote+"]")
	check(t, "paths[rg]", f.Paths["rg"], "/usr/local/bin/rg -> /mnt/c/Users/dev/bin/rg ["+InteropNote+"]")
	check(t, "paths[bwrap]", f.Paths["bwrap"], "/usr/bin/bwrap")
	check(t, "paths[wslinfo]", f.Paths["wslinfo"], "/usr/bin/wslinfo")
	check(t, "userns[apparmor]", f.Userns["kernel.apparmor_restrict_unprivileged_userns"], Missing)
	check(t, "userns[clone]", f.Userns["kernel.unprivileged_userns_clone"], Missing)
	check(t, "userns[max]", f.Userns["user.max_user_namespaces"], "63704")
	if len(f.ProxyEnv) != 0 {
		t.Errorf("proxy_env = %v, want none", f.ProxyEnv)
	}
	if f.GitProxy != nil {
		t.Errorf("git_proxy = %v without git", f.GitProxy)
	}
	check(t, "pid1_seccomp", f.PID1Seccomp, "2 filter (1 filters)")

	var buf bytes.Buffer
	if err := WriteTable(&buf, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WSL2", "mirrored", InteropNote, "git missing", "2 filter"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	t.Logf("\n%s", buf.String())
}

func TestWSL1(t *testing.T) {
	root := fixture(t, "wsl1")
	fr := &fakeRun{out: map[string]string{"socat": "socat version 1.7.3.3 on Feb 2020\n"}}
	f := Collect(Options{Root: root, Env: []string{"PATH=/usr/bin:/bin", "HOME=/home/dev"}, Run: fr.run, Now: fixedNow})
	check(t, "kernel", f.Kernel, "4.4.0-19041-Microsoft")
	check(t, "wsl_version", f.WSLVersion, "1")
	check(t, "wsl_networking_mode", f.WSLNetworkingMode, "") // no wslinfo on WSL1
	if !f.WSLInterop {
		t.Error("wsl_interop = false with WSLInterop registered")
	}
	check(t, "socat", f.Socat, "1.7.3.3")
	check(t, "bwrap", f.Bwrap, Missing)
	check(t, "pid1_seccomp", f.PID1Seccomp, "unknown") // WSL1's /proc/1/status has no Seccomp line
	for _, k := range UsernsSysctls {
		check(t, "userns["+k+"]", f.Userns[k], Missing)
	}
	rc := f.CurlRC["/etc/curlrc"]
	if !rc.Exists || !reflect.DeepEqual(rc.ProxyLines, []string{"proxy = http://10.0.0.1:8080"}) {
		t.Errorf("/etc/curlrc = %+v", rc)
	}
	// the arch is not in the tree: it falls back to this binary's
	if f.Arch == "" {
		t.Error("arch empty")
	}
}

func TestWSLVersion(t *testing.T) {
	for _, tc := range []struct {
		release  string
		evidence bool
		want     string
	}{
		{"6.6.87.2-microsoft-standard-WSL2", false, "2"},
		{"5.15.167.4-microsoft-standard-WSL2+", true, "2"},
		{"4.19.128-microsoft-standard", false, "2"}, // early WSL2 kernels lack the WSL2 suffix
		{"4.4.0-19041-Microsoft", false, "1"},
		{"4.4.0-22621-Microsoft", true, "1"},
		{"6.1.0-28-amd64", false, ""},
		{"6.12.3-custom", true, "2"}, // a custom kernel is only possible on WSL2
	} {
		if got := wslVersion(tc.release, tc.evidence); got != tc.want {
			t.Errorf("wslVersion(%q, %v) = %q, want %q", tc.release, tc.evidence, got, tc.want)
		}
	}
}

func TestVersionUnknown(t *testing.T) {
	c := newCollector(Options{Root: "/nonexistent", Env: []string{}, Run: func(argv ...string) (string, error) {
		if filepath.Base(argv[0]) == "bwrap" {
			return "bwrap: error while loading shared libraries\n", errors.New("exit status 127")
		}
		return "", errors.New("signal: killed")
	}})
	check(t, "bwrap", c.version("bwrap", "/usr/bin/bwrap"), "unknown (bwrap: error while loading shared libraries)")
	check(t, "node", c.version("node", "/usr/bin/node"), "unknown (signal: killed)")
	check(t, "rg", c.version("rg", ""), Missing)
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://proxy:3128":                   "http://proxy:3128",
		"http://u:p@proxy:3128":               "http://REDACTED@proxy:3128",
		"http://u:p@ss@proxy:3128/x@y":        "http://REDACTED@proxy:3128/x@y",
		"u:p@proxy:3128":                      "REDACTED@proxy:3128",
		"http://a:b@p1:1,http://p2:2":         "http://REDACTED@p1:1,http://p2:2",
		"localhost,127.0.0.1,.corp.example":   "localhost,127.0.0.1,.corp.example",
		"socks5h://token@127.0.0.1:1080?x=@y": "socks5h://REDACTED@127.0.0.1:1080?x=@y",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInteropMounts(t *testing.T) {
	m := interop{mounts: parseDrvfsMounts(`C:\134 /mnt/c 9p rw,aname=drvfs;path=C:\ 0 0
D:\134 /win/d\040drive drvfs rw 0 0
/dev/sdc / ext4 rw 0 0
`)}
	if !reflect.DeepEqual(m.mounts, []string{"/mnt/c", "/win/d drive"}) {
		t.Fatalf("mounts = %q", m.mounts)
	}
	for p, want := range map[string]bool{
		"/mnt/c/x/node": true, "/mnt/cc/node": false, "/win/d drive/bin/socat": true, "/usr/bin/node": false,
	} {
		if m.contains(p) != want {
			t.Errorf("contains(%q) = %v", p, !want)
		}
	}
	// On WSL without a mount table, /mnt/<letter>/ still counts.
	m = interop{autoRoot: "/mnt/"}
	if !m.contains("/mnt/e/tools/bwrap") || m.contains("/mnt/wsl/bwrap") {
		t.Error("automount root rule wrong")
	}
}

// TestJSONKeys pins the keys reports read.
func TestJSONKeys(t *testing.T) {
	b, err := json.Marshal(Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	want := []string{"arch", "bwrap", "collected_at", "curlrc", "distro", "git_proxy", "kernel", "node",
		"paths", "pid1_seccomp", "proxy_env", "rg", "sandbox", "socat", "userns", "wsl_interop",
		"wsl_networking_mode", "wsl_version"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON keys = %q\nwant %q", got, want)
	}
}

// TestThisHost runs Collect for real.
func TestThisHost(t *testing.T) {
	out, err := exec.Command("uname", "-r").Output()
	if err != nil {
		skip.Missing(t, "uname: %v", err)
	}
	start := time.Now()
	f := Collect(Options{})
	t.Logf("collected in %v", time.Since(start))
	check(t, "kernel", f.Kernel, strings.TrimSpace(string(out)))
	if f.Distro == "" || f.Arch == "" || f.PID1Seccomp == "" {
		t.Errorf("empty facts: %+v", f)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if f.Bwrap == "" || f.Bwrap == Missing || strings.HasPrefix(f.Bwrap, "unknown") {
			t.Errorf("bwrap on PATH but version = %q", f.Bwrap)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, f); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
}

// TestDefaultRunOnFixture uses the real exec path: the fixture's tools are small shell scripts,
// and symlinks into /mnt/c resolve inside the tree, not on this host.
func TestDefaultRunOnFixture(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		skip.Missing(t, "no sh")
	}
	f := Collect(Options{
		Root: filepath.Join("testdata", "wsl2"), // relative on purpose
		Env:  []string{"PATH=/usr/local/bin:/usr/bin:/mnt/c/Program Files/nodejs", "HOME=/home/dev"},
	})
	check(t, "wsl_networking_mode", f.WSLNetworkingMode, "mirrored")
	check(t, "bwrap", f.Bwrap, "0.9.0")
	check(t, "node", f.Node, "v22.11.0")
	check(t, "rg", f.Rg, "14.1.1")
}

// TestTableNamesTheSandboxUser: the fingerprint says who the sandbox runs as.
func TestTableNamesTheSandboxUser(t *testing.T) {
	var b strings.Builder
	f := Fingerprint{User: &User{Spec: "unprivileged", Name: "sandcheck", UID: 1001, GID: 1001, Groups: []int{1001}, Home: "/home/sandcheck"}}
	if err := WriteTable(&b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unprivileged: sandcheck (uid 1001, gid 1001, groups [1001], HOME /home/sandcheck)") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	WriteTable(&b, Fingerprint{User: &User{Spec: "unprivileged", Note: "not created yet"}})
	if !strings.Contains(b.String(), "sandbox user") || !strings.Contains(b.String(), "not created yet") {
		t.Errorf("table:\n%s", b.String())
	}
}

// A sandbox other than srt is named by its own name in the paths, not as srt (a Claude Code
// report's environment read "paths.srt: .../claude-code/..."): srt's slot stays srt's, looked up
// on PATH.
func TestSandboxPathUnderItsName(t *testing.T) {
	root := t.TempDir()
	for name, want := range map[string]map[string]string{
		"claude-code": {"claude-code": "/opt/claude/cli.js", "srt": Missing},
		"srt":         {"srt": "/opt/claude/cli.js"},
		"":            {"srt": "/opt/claude/cli.js"},
	} {
		f := Collect(Options{Root: root, Env: []string{"PATH=/usr/bin"}, Run: (&fakeRun{}).run, Now: fixedNow,
			SandboxName: name, SandboxPath: "/opt/claude/cli.js"})
		for k, v := range want {
			check(t, name+": paths["+k+"]", f.Paths[k], v)
		}
		if name == "claude-code" && len(f.Paths) != len(PathTools)+1 {
			t.Errorf("claude-code: paths %v, want the tools and the sandbox", f.Paths)
		}
	}
}
