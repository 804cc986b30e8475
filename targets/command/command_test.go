package command

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

func settings(argv []string, extra map[string]string) map[string]string {
	b, _ := json.Marshal(argv)
	s := map[string]string{"argv": string(b)}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func anyOf(s map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	return out
}

func TestSettingsErrors(t *testing.T) {
	for name, s := range map[string]map[string]string{
		"no argv":         {},
		"argv not a list": {"argv": "my-sandbox --"},
		"bad template":    settings([]string{"x", "{{.Nope"}, nil),
		"bad caps":        settings([]string{"x"}, map[string]string{"capabilities": "deny-read"}),
		"policy path":     settings([]string{"x"}, map[string]string{"policy_file": "../p"}),
		// A misspelt capability would make every check that needs it not-applicable.
		"unknown capability": settings([]string{"x"}, map[string]string{"capabilities": `["writable-paths", "deny-raed"]`}),
		"unknown channel":    settings([]string{"x"}, map[string]string{"reach": `["htp"]`}),
	} {
		if _, err := targets.New(Name, s); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := targets.CheckSettings(Name, anyOf(s)); err == nil {
			t.Errorf("%s: the settings check lets it through", name)
		}
	}
}

// TestRealSandboxFromTemplates drives the real bubblewrap through the templates: the policy file
// is rendered and handed in, {{.Command}} is one shell word, {{.Argv}} splices the argv, and the
// declared capabilities and reach are what the target reports.
func TestRealSandboxFromTemplates(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		skip.Missing(t, "bwrap not installed (run `make deps`)")
	}
	skip.UnlessRoot(t, "bwrap --unshare-net")
	argv := []string{"bwrap", "--die-with-parent", "--unshare-net", "--ro-bind", "/", "/", "--bind", "{{.Workspace}}", "{{.Workspace}}",
		"--ro-bind", "{{.PolicyFile}}", "{{.PolicyFile}}", "--chdir", "{{.Workspace}}", "--", "sh", "-c", "cat {{.PolicyFile}}; {{.Command}}"}
	tg, err := targets.New(Name, settings(argv, map[string]string{
		"policy_template": `{"allow": {{json .AllowedHosts}}, "write": {{json .WritablePaths}}, "ws": "{{.Workspace}}"}`,
		"policy_file":     "policy.json",
		"capabilities":    `["deny-all-network", "writable-paths"]`,
		"reach":           `[]`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !targets.DenyAll(tg) || !targets.Has(tg, model.CapWritablePaths) || targets.Has(tg, model.CapDenyRead) {
		t.Errorf("capabilities %v reach %v", tg.Capabilities(), tg.Reach())
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	s := &targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(),
		Command: []string{"sh", "-c", `echo "it's $1" > ok && readlink /proc/self/ns/net; echo x > /etc/sandcheck-command-test 2>/dev/null && echo ESCAPED; true`, "sh", "quoted arg"},
		Policy:  targets.Policy{AllowedHosts: []string{"allowed.sandcheck.test"}, WritablePaths: []string{ws}}}
	inv, err := tg.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env, cmd.Dir = inv.Env, inv.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", inv.Argv, err, out)
	}
	o := string(out)
	t.Logf("argv %q\n%s", inv.Argv, o)
	if !strings.Contains(o, `"allow": ["allowed.sandcheck.test"]`) || !strings.Contains(o, `"ws": "`+ws+`"`) {
		t.Errorf("policy file not rendered as templated:\n%s", o)
	}
	if inv.Settings == "" || !strings.Contains(inv.Settings, "allowed.sandcheck.test") {
		t.Errorf("settings for the report: %q", inv.Settings)
	}
	if strings.Contains(o, hostNet) || strings.Contains(o, "ESCAPED") {
		t.Errorf("sandbox not confining:\n%s", o)
	}
	os.Remove("/etc/sandcheck-command-test")
	if b, _ := os.ReadFile(filepath.Join(ws, "ok")); string(b) != "it's quoted arg\n" {
		t.Errorf("{{.Command}} quoting: wrote %q", b)
	}

	// {{.Argv}} as a whole element splices the command's argv.
	tg2, err := New(settings([]string{"env", "{{.Argv}}"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	inv, err = tg2.Prepare(&targets.Session{Dir: dir, Workspace: ws, Command: []string{"echo", "a b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(inv.Argv, "|"); got != "env|echo|a b|c" {
		t.Errorf("splice: %s", got)
	}
}
