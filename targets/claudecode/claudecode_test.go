package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/scriptedmodel"
	"github.com/sandcheck/sandcheck/targets"
)

func TestNativeFollowsTheInstallToThePlatformBinary(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "node_modules", ".bin", "claude")
	native := filepath.Join(root, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	for _, p := range []string{bin, native} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
	}
	if got := Native(bin); got != native {
		t.Fatalf("Native(%s) = %s, want %s", bin, got, native)
	}
	if got := Native(native); got != native {
		t.Fatalf("a native path is kept: %s", got)
	}
	other := filepath.Join(root, "claude")
	if got := Native(other); got != other {
		t.Fatalf("a path outside an install is kept: %s", got)
	}
	os.Remove(native)
	if got := Native(bin); got != bin {
		t.Fatalf("without the platform package the wrapper's binary stays: %s", got)
	}
}

func TestSettingsFromPolicyMergedOverTheUsersOwn(t *testing.T) {
	p := targets.Policy{AllowedHosts: []string{"allowed.test"}, WritablePaths: []string{"/ws"}, DenyRead: []string{"/secret"}}
	s, err := Settings(p, "", []func(map[string]any){func(m map[string]any) {
		m["network"].(map[string]any)["httpProxyPort"] = 9 // a fault sees srt's shape
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	want := `{"sandbox":{"allowUnsandboxedCommands":false,"enabled":true,"failIfUnavailable":true,` +
		`"filesystem":{"allowWrite":["/ws"],"denyRead":["/secret"]},"network":{"allowedDomains":["allowed.test"],"httpProxyPort":9}}}`
	if string(b) != want {
		t.Fatalf("settings\n%s\nwant\n%s", b, want)
	}

	user := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(user, []byte(`{"model":"x","sandbox":{"enabled":false,"network":{"allowedDomains":["github.com"]}}}`), 0o644)
	s, err = Settings(p, user, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb := s["sandbox"].(map[string]any)
	if s["model"] != "x" || sb["enabled"] != false || sb["failIfUnavailable"] != true {
		t.Fatalf("the user's keys are kept, defaults fill the rest: %v", s)
	}
	if got := targets.SettingsStrings(sb["network"].(map[string]any)["allowedDomains"]); !slices.Equal(got, []string{"github.com", "allowed.test"}) {
		t.Fatalf("allow-list %v", got)
	}
	os.WriteFile(user, []byte(`{`), 0o644)
	if _, err := Settings(p, user, nil); err == nil || !strings.Contains(err.Error(), user) {
		t.Fatalf("an unreadable user file is an error naming it: %v", err)
	}
}

func TestOverrideReachesDottedKeys(t *testing.T) {
	m := map[string]any{"enabled": true, "network": map[string]any{"allowedDomains": []string{"a"}}}
	override(m, map[string]any{"enabled": false, "network.strictAllowlist": true, "failIfUnavailable": nil, "network.allowedDomains": nil})
	b, _ := json.Marshal(m)
	if string(b) != `{"enabled":false,"network":{"strictAllowlist":true}}` {
		t.Fatalf("%s", b)
	}
}

// persistedResult is a tool result as Claude Code writes it when it saved the output to a file
// (its function that wraps a persisted result: the tag, the line saying where, a preview, the
// closing tag).
func persistedResult(where string) string {
	return "<persisted-output>\n" + where + "\n\nPreview (first 2KB):\nSANDCHECK-SANDBOX-RAN n\n...\n</persisted-output>"
}

func TestInterpret(t *testing.T) {
	res := func(content string, isErr bool) *scriptedmodel.ToolResult {
		return &scriptedmodel.ToolResult{Content: content, IsError: isErr}
	}
	reqs := []scriptedmodel.Request{{Kind: scriptedmodel.KindReachable}, {Kind: scriptedmodel.KindFirst}, {Kind: scriptedmodel.KindToolResult}}
	cases := []struct {
		name    string
		in      scriptedmodel.Report
		ran     bool
		exit    int
		trouble string
		note    string
	}{
		{"ran, exit 0", scriptedmodel.Report{Requests: reqs, Result: res("SANDCHECK-SANDBOX-RAN n\nok", false)}, true, 0, "", "reachable, first-turn, tool-result"},
		{"exit code line", scriptedmodel.Report{Result: res("Exit code 3\nboom", true)}, true, 3, "", ""},
		{"refused without a status", scriptedmodel.Report{Result: res("Claude requested permissions to use Bash, but you haven't granted it yet.", true)}, true, 1, "", ""},
		{"violations kept", scriptedmodel.Report{Result: res("Exit code 22\ncurl: (22) 403\n<sandbox_violations>\ndeny network-outbound denied.example:80\n</sandbox_violations>", true)},
			true, 22, "", "sandbox violation: deny network-outbound denied.example:80"},
		// Claude Code's own wrapper (2.1.215 and 2.1.332 alike): the whole result, from its first
		// byte, with what the command wrote to stderr after it.
		{"cut short", scriptedmodel.Report{Result: res(persistedResult("Output too large (58.6KB). Full output saved to: /h/x.txt"), false)},
			true, 0, "Claude Code did not hand back the whole output (Output too large (58.6KB). Full output saved to: /h/x.txt)", ""},
		{"cut short at the persist limit, stderr after", scriptedmodel.Report{Result: res(persistedResult(
			"Output exceeded the 64MB persist limit; only the first 64MB were saved to: /h/y.txt")+"\nsome stderr", false)},
			true, 0, "Claude Code did not hand back the whole output (Output exceeded the 64MB persist limit; only the first 64MB were saved to: /h/y.txt)", ""},
		{"cut short, a marker carried", scriptedmodel.Report{Result: res(strings.Replace(persistedResult("Output too large (40KB). Full output saved to: /h/z.txt"),
			"\n", "\n<artifact-content-authored-by-others/>\n", 1), false)},
			true, 0, "Claude Code did not hand back the whole output (Output too large (40KB). Full output saved to: /h/z.txt)", ""},
		// The command's own output is not Claude Code's word: the probe's frame comes first, and
		// what the command printed after it (a file it read, a reply it got) may say anything.
		{"the command prints the wrapper", scriptedmodel.Report{Result: res("SANDCHECK-SANDBOX-RAN n\n"+persistedResult("Output too large (58.6KB). Full output saved to: /h/x.txt"), false)},
			true, 0, "", ""},
		{"the command prints the marker mid-line", scriptedmodel.Report{Result: res("SANDCHECK-SANDBOX-RAN n\ndata: <persisted-output> Output too large (1KB). Full output saved to: /x", false)},
			true, 0, "", ""},
		{"the wrapper's tag alone", scriptedmodel.Report{Result: res("<persisted-output>\nhello\n</persisted-output>", false)}, true, 0, "", ""},
		{"no result", scriptedmodel.Report{Requests: reqs[:1]}, false, 0, "", "scripted model saw: reachable"},
		{"unexpected", scriptedmodel.Report{Unexpected: []string{"POST /v1/other: endpoint POST /v1/other is not scripted"}}, false, 0,
			"scripted model: unexpected request POST /v1/other", "scripted model saw no request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Interpret(c.in)
			if r.Ran != c.ran || r.Exit != c.exit {
				t.Fatalf("ran %v exit %d, want %v %d", r.Ran, r.Exit, c.ran, c.exit)
			}
			if c.trouble == "" && len(r.Trouble) > 0 || c.trouble != "" && (len(r.Trouble) != 1 || !strings.HasPrefix(r.Trouble[0], c.trouble)) {
				t.Fatalf("trouble %q, want %q", r.Trouble, c.trouble)
			}
			if c.note != "" && !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, c.note) }) {
				t.Fatalf("notes %q lack %q", r.Notes, c.note)
			}
			if c.ran && string(r.Output) != c.in.Result.Content {
				t.Fatalf("output %q", r.Output)
			}
		})
	}
}

func TestEnvPointsAtTheScriptedModelAndDropsTheCallers(t *testing.T) {
	env := Env([]string{"PATH=/bin", "HOME=/root", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "ANTHROPIC_API_KEY=real", "HTTP_PROXY=http://127.0.0.1:9", "no_proxy=corp"},
		"/h", "http://127.0.0.1:5")
	for _, bad := range []string{"HOME=/root", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "ANTHROPIC_API_KEY=real", "no_proxy=corp"} {
		if slices.Contains(env, bad) {
			t.Fatalf("%s handed down: %v", bad, env)
		}
	}
	for _, want := range []string{"HOME=/h", "ANTHROPIC_BASE_URL=http://127.0.0.1:5", "ANTHROPIC_API_KEY=" + DummyKey, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=corp,127.0.0.1,localhost", "no_proxy=corp,127.0.0.1,localhost"} {
		if !slices.Contains(env, want) {
			t.Fatalf("%s missing: %v", want, env)
		}
	}
	if env := Env([]string{"NO_PROXY=x"}, "/h", "u"); !slices.Contains(env, "NO_PROXY=x") {
		t.Fatalf("without a caller proxy NO_PROXY stays as it was: %v", env)
	}
}

// A settings file the scenario gives (--settings FILE, as the untrusted family's are) is laid out
// with what it holds, so that a reproducer can give it again; one that is not a regular file is
// not.
func TestPrepareLaysOutAGivenSettingsFile(t *testing.T) {
	tg := &Target{path: "/bin/true"}
	for text, laid := range map[string]bool{"": true, "{\"network\": {": true, "<dir>": false} {
		dir := t.TempDir()
		ws, given := filepath.Join(dir, "workspace"), filepath.Join(dir, "settings.json")
		os.Mkdir(ws, 0o755)
		if text == "<dir>" {
			os.Mkdir(given, 0o755)
		} else {
			os.WriteFile(given, []byte(text), 0o640)
		}
		inv, err := tg.Prepare(&targets.Session{Dir: dir, Workspace: ws, Command: []string{"probe"}, SettingsFile: given})
		if err != nil {
			t.Fatal(err)
		}
		inv.Agent.Finish()
		i := slices.IndexFunc(inv.Layout, func(f targets.File) bool { return f.Path == given })
		if (i >= 0) != laid || laid && (inv.Layout[i].Text != text || inv.Layout[i].Mode != 0o640) {
			t.Errorf("settings %q: laid out %v, want %v (%+v)", text, i >= 0, laid, inv.Layout)
		}
	}
}

func TestPrepareLaysOutTheRun(t *testing.T) {
	tg := &Target{path: "/bin/true"}
	cases := []struct {
		opt      Options
		file     string // where the generated settings land, relative to the session dir
		trust    any    // hasTrustDialogAccepted, or nil for no ~/.claude.json
		argvHas  []string
		argvLack []string
	}{
		{Options{}, "claude-home/.claude/settings.json", true, []string{"--allowedTools", "Bash"}, []string{"--permission-mode", "--dangerously-skip-permissions", "--settings"}},
		{Options{Permission: PermissionBypass}, "claude-home/.claude/settings.json", true, []string{"--dangerously-skip-permissions", "--allowedTools"}, nil},
		{Options{Permission: "plan", NoAllowList: true, Trust: TrustDeclined, Source: SourceProject}, "workspace/.claude/settings.json", false,
			[]string{"--permission-mode", "plan"}, []string{"--allowedTools"}},
		{Options{Source: SourceLocal, Trust: TrustNone}, "workspace/.claude/settings.local.json", nil, nil, nil},
		{Options{Source: SourceManaged}, ManagedDir + "/claude-code/managed-settings.json", true, nil, nil},
		{Options{Source: SourceFlag}, "claude-flag-settings.json", true, []string{"--settings"}, nil},
	}
	for _, c := range cases {
		dir := t.TempDir()
		ws := filepath.Join(dir, "workspace")
		os.Mkdir(ws, 0o755)
		s := &targets.Session{Dir: dir, Workspace: ws, Command: []string{"probe", "it's"}, Env: []string{"PATH=/bin", "HOME=/home/u"},
			Policy: targets.Policy{AllowedHosts: []string{"a.test"}}, Adapter: c.opt}
		inv, err := tg.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		inv.Agent.Finish()
		b, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil || !strings.Contains(string(b), `"a.test"`) || string(b) != inv.Settings {
			t.Fatalf("%+v: settings at %s: %s, %v", c.opt, c.file, b, err)
		}
		cj, err := os.ReadFile(filepath.Join(dir, "claude-home", ".claude.json"))
		if c.trust == nil {
			if err == nil {
				t.Fatalf("%+v: fresh HOME has a .claude.json", c.opt)
			}
		} else {
			var doc struct {
				Projects map[string]map[string]any
			}
			json.Unmarshal(cj, &doc)
			if doc.Projects[ws]["hasTrustDialogAccepted"] != c.trust {
				t.Fatalf("%+v: trust %s", c.opt, cj)
			}
		}
		for _, a := range c.argvHas {
			if !slices.Contains(inv.Argv, a) {
				t.Fatalf("%+v: argv %q lacks %s", c.opt, inv.Argv, a)
			}
		}
		for _, a := range c.argvLack {
			if slices.Contains(inv.Argv, a) {
				t.Fatalf("%+v: argv %q has %s", c.opt, inv.Argv, a)
			}
		}
		// The invocation's layout is every file written, with what it holds: a reproducer writes them again.
		var laid []string
		for _, f := range inv.Layout {
			if b, err := os.ReadFile(f.Path); err != nil || string(b) != f.Text {
				t.Fatalf("%+v: layout %s does not hold what was written (%v)", c.opt, f.Path, err)
			}
			laid = append(laid, strings.TrimPrefix(f.Path, dir+"/"))
		}
		if want := []string{c.file}; c.trust != nil && !slices.Equal(laid, append(want, "claude-home/.claude.json")) || c.trust == nil && !slices.Equal(laid, want) {
			t.Fatalf("%+v: layout %q", c.opt, laid)
		}
		if inv.Dir != ws || !slices.Contains(inv.Env, "HOME="+filepath.Join(dir, "claude-home")) {
			t.Fatalf("cwd %s, env %v", inv.Dir, inv.Env)
		}
	}
	if _, err := tg.Prepare(&targets.Session{Dir: t.TempDir(), Adapter: Options{Trust: "maybe"}}); err == nil {
		t.Fatal("a bad trust state is an error")
	}
	if _, err := New("/bin/true", "yolo"); err == nil || !strings.Contains(err.Error(), "permission_mode") {
		t.Fatalf("a bad permission mode is an error naming the setting: %v", err)
	}
}

// The real Claude Code, as root (its default permission mode with --allowedTools Bash works as
// root), its Bash tool run by the scripted model inside the sandbox: the command's status and
// output come back through the agent, and the sandbox's proxy is in its environment.
func TestRealClaudeRunsTheCommandInItsSandbox(t *testing.T) {
	tg, err := New("", "")
	if err != nil {
		t.Fatalf("the pinned Claude Code must be installed (make deps): %v", err)
	}
	if v := tg.Version(); v != Package+"@"+PinnedVersion {
		t.Fatalf("version %q", v)
	}
	before := emptyMountSources()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o755)
	inv, err := tg.Prepare(&targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(),
		Command: []string{"sh", "-c", `echo "proxy=$HTTPS_PROXY"; touch /etc/sandcheck-cc-unit 2>&1; exit 3`},
		Policy:  targets.Policy{WritablePaths: []string{ws}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, inv.Argv[0], inv.Argv[1:]...)
	// Claude Code's own files (its per-project state, the bundled runtime's sockets) in a
	// directory of the test's own, which goes with it, as a trial's go with its directory.
	// (TMPDIR, not CLAUDE_CODE_TMPDIR: the runtime puts its sockets in os.tmpdir(), and Claude
	// Code makes /tmp/claude-UID for its children when CLAUDE_CODE_TMPDIR's is too long.)
	tmp := t.TempDir()
	cmd.Env, cmd.Dir = targets.SetEnv(inv.Env, "TMPDIR", tmp), inv.Dir
	out, err := cmd.CombinedOutput()
	res := inv.Agent.Finish()
	if err != nil || !res.Ran {
		t.Fatalf("claude: %v\n%s\nagent: %+v", err, out, res)
	}
	os.Remove("/etc/sandcheck-cc-unit")
	got := string(res.Output)
	if res.Exit != 3 || !strings.Contains(got, "proxy=http://") || !strings.Contains(got, "Read-only file system") {
		t.Fatalf("exit %d, output:\n%s", res.Exit, got)
	}
	if _, err := os.Stat(filepath.Join(tmp, fmt.Sprintf("claude-%d", os.Getuid()))); err != nil {
		t.Errorf("Claude Code's per-uid directory is not in the TMPDIR it was given: %v", err)
	}
	for _, p := range leftInSharedTmp(cmd.Process.Pid, dir, before) {
		t.Errorf("Claude Code left %s in the shared /tmp", p)
	}
}

// leftInSharedTmp lists what the Claude Code run pid, in a workspace under dir, made in /tmp:
// its per-project state (in the per-uid directory, named after the workspace), the bundled
// runtime's socket (named after pid) and empty mount sources (claude-empty-*, not in before).
func leftInSharedTmp(pid int, dir string, before []string) []string {
	left, _ := filepath.Glob(fmt.Sprintf("/tmp/srt-mux-%d-*", pid))
	projects, _ := filepath.Glob(fmt.Sprintf("/tmp/claude-%d/*%s*", os.Getuid(), filepath.Base(filepath.Dir(dir))))
	left = append(left, projects...)
	for _, p := range emptyMountSources() {
		if !slices.Contains(before, p) {
			left = append(left, p)
		}
	}
	return left
}

func emptyMountSources() []string {
	m, _ := filepath.Glob("/tmp/claude-empty-*")
	return m
}
