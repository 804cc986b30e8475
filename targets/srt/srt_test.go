package srt

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/targets"
)

func TestSettingsMergeUserFileUnderPolicy(t *testing.T) {
	user := filepath.Join(t.TempDir(), "user.json")
	os.WriteFile(user, []byte(`{"network":{"allowedDomains":["myorg.example"],"deniedDomains":["x.example"]},
		"filesystem":{"allowWrite":["/data"]},"ignoreViolations":{"*":["/usr/bin"]}}`), 0o644)
	s, err := Settings(targets.Policy{AllowedHosts: []string{"allowed.sandcheck.test"}, WritablePaths: []string{"/ws"}, DenyRead: []string{"/secret"}}, user)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var got struct {
		Network struct {
			AllowedDomains, DeniedDomains []string
		}
		Filesystem struct {
			AllowWrite, DenyRead, DenyWrite []string
		}
		IgnoreViolations map[string][]string
	}
	json.Unmarshal(b, &got)
	if !slices.Equal(got.Network.AllowedDomains, []string{"myorg.example", "allowed.sandcheck.test"}) ||
		!slices.Equal(got.Network.DeniedDomains, []string{"x.example"}) ||
		!slices.Equal(got.Filesystem.AllowWrite, []string{"/data", "/ws"}) ||
		!slices.Equal(got.Filesystem.DenyRead, []string{"/secret"}) || got.Filesystem.DenyWrite == nil ||
		len(got.IgnoreViolations) != 1 {
		t.Fatalf("merged settings: %s", b)
	}
	if _, err := Settings(targets.Policy{}, filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("a missing user settings file must be an error")
	}
}

func TestPrepareBranches(t *testing.T) {
	dir := t.TempDir()
	tg := &Target{cli.At("/opt/srt")}
	s := &targets.Session{Dir: dir, Workspace: dir, Command: []string{"/bin/echo", "it's"},
		Patches: []func(map[string]any){func(m map[string]any) { m["network"].(map[string]any)["httpProxyPort"] = 9 }}}
	inv, err := tg.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inv.Argv[:3], []string{"/opt/srt", "--settings", filepath.Join(dir, "srt-settings.json")}) ||
		inv.Argv[4] != `'/bin/echo' 'it'\''s'` || !strings.Contains(inv.Settings, `"httpProxyPort": 9`) {
		t.Fatalf("generated: %q\n%s", inv.Argv, inv.Settings)
	}
	s.SettingsFile = filepath.Join(dir, "given.json")
	if inv, _ = tg.Prepare(s); inv.Argv[2] != s.SettingsFile {
		t.Fatalf("verbatim settings file: %q", inv.Argv)
	}
	s.SettingsFile, s.NoSettings = "", true
	if inv, _ = tg.Prepare(s); len(inv.Argv) != 3 || inv.Argv[1] != "-c" {
		t.Fatalf("no settings: %q", inv.Argv)
	}
}

// The pinned srt is found and reports its version; it runs a command under real bubblewrap.
func TestRealSRTRuns(t *testing.T) {
	tg, err := New("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	if !strings.HasPrefix(tg.Version(), "@anthropic-ai/sandbox-runtime@") {
		t.Fatalf("version = %q", tg.Version())
	}
	ws := t.TempDir()
	inv, err := tg.Prepare(&targets.Session{Dir: t.TempDir(), Workspace: ws, Env: os.Environ(),
		Policy: targets.Policy{WritablePaths: []string{ws}}, Command: []string{"sh", "-c", "echo inside; touch /etc/nope"}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Dir, cmd.Env = inv.Dir, inv.Env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "inside") || !strings.Contains(string(out), "Read-only file system") {
		t.Fatalf("srt run:\n%s", out)
	}
}

// The policy's secrets are srt's credentials section: variables and files, withheld or masked
// with the hosts the real value may go to; and the real srt takes it: a withheld variable is
// unset inside, a withheld file unreadable, an undeclared one as it was.
func TestCredentialsSettings(t *testing.T) {
	p := targets.Policy{AllowedHosts: []string{"allowed.sandcheck.test", "inject.sandcheck.test"}, Credentials: []targets.Credential{
		{Env: "SC_DENY"}, {File: "~/.netrc"},
		{Env: "SC_MASK", Mask: true, InjectHosts: []string{"inject.sandcheck.test"}, PlaintextInject: true}}}
	s, err := Settings(p, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s["credentials"])
	want := `{"allowPlaintextInject":true,"envVars":[{"mode":"deny","name":"SC_DENY"},{"injectHosts":["inject.sandcheck.test"],"mode":"mask","name":"SC_MASK"}],"files":[{"mode":"deny","path":"~/.netrc"}]}`
	if string(b) != want {
		t.Errorf("credentials:\n%s\nwant\n%s", b, want)
	}

	tg, err := New("")
	if err != nil {
		skip.Missing(t, "%v", err)
	}
	home, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, ".netrc"), []byte("password sc-file-secret\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".open"), []byte("sc-file-open\n"), 0o600)
	env := append(os.Environ(), "HOME="+home, "SC_DENY=sc-env-secret", "SC_MASK=sc-env-masked", "SC_OPEN=sc-env-open")
	p.WritablePaths = []string{ws}
	inv, err := tg.Prepare(&targets.Session{Dir: t.TempDir(), Workspace: ws, Env: env, Policy: p,
		Command: []string{"sh", "-c", `echo "deny=$SC_DENY mask=$SC_MASK open=$SC_OPEN"; cat ~/.netrc ~/.open`}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Dir, cmd.Env = inv.Dir, inv.Env
	out, _ := cmd.CombinedOutput()
	o := string(out)
	if !strings.Contains(o, "deny= ") || !strings.Contains(o, "open=sc-env-open") || !strings.Contains(o, "sc-file-open") ||
		strings.Contains(o, "sc-file-secret") || strings.Contains(o, "sc-env-masked") || !strings.Contains(o, "mask=") {
		t.Fatalf("srt run with credentials:\n%s", o)
	}
}

func TestLocateOrder(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "srt")
	os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755)
	t.Cleanup(config.With(func(e *config.Env) { e.SRT = fake }))
	if p, err := Locate(""); err != nil || p != fake {
		t.Fatalf("env: %q %v", p, err)
	}
	if _, err := Locate(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("an explicit missing path must be an error")
	}
}
