package srt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

func TestShapeOfEachRelease(t *testing.T) {
	cases := []struct {
		version string
		dialect Dialect
		command CommandForm
	}{
		{"0.0.1", DialectPermissions, CommandJoined},
		{"@anthropic-ai/sandbox-runtime@0.0.1", DialectPermissions, CommandJoined},
		{"0.0.2", DialectSRT, CommandJoined},
		{"0.0.20", DialectSRT, CommandJoined},
		{"0.0.21", DialectSRT, CommandFlag},
		{"0.0.83", DialectSRT, CommandFlag},
		{"0.1.0", DialectSRT, CommandFlag},   // newer than the table: the newest shape
		{"unknown", DialectSRT, CommandFlag}, // no version to read: the newest shape
	}
	for _, c := range cases {
		s := ShapeOf(c.version)
		if s.Dialect != c.dialect || s.Command != c.command || s.Drivable != "" {
			t.Errorf("ShapeOf(%q) = %+v, want %s %s", c.version, s, c.dialect, c.command)
		}
	}
	if s := ShapeOf("0.0.0"); !strings.Contains(s.Drivable, "older than the first release") {
		t.Errorf("0.0.0: %+v (a build before the first release cannot be driven)", s)
	}
}

// fakeInstall lays out an npm install of srt at version (package.json beside dist/cli.js, .bin/srt
// a link), so the adapter reads its version as it does from a real install.
func fakeInstall(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "node_modules", "@anthropic-ai", "sandbox-runtime")
	os.MkdirAll(filepath.Join(pkg, "dist"), 0o755)
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@anthropic-ai/sandbox-runtime","version":"`+version+`"}`), 0o644)
	os.WriteFile(filepath.Join(pkg, "dist", "cli.js"), []byte("#!/usr/bin/env node\n"), 0o755)
	bin := filepath.Join(root, "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	os.Symlink("../@anthropic-ai/sandbox-runtime/dist/cli.js", filepath.Join(bin, "srt"))
	return filepath.Join(bin, "srt")
}

func TestPrepareSpeaksEachReleasesShape(t *testing.T) {
	policy := targets.Policy{AllowedHosts: []string{"allowed.sandcheck.test"}, WritablePaths: []string{"/ws"}, DenyRead: []string{"/secret"}}
	cmd := []string{"/bin/probe", "spec file.json"}
	prepare := func(version string, mod func(*targets.Session)) *targets.Invocation {
		t.Helper()
		tg, err := New(fakeInstall(t, version))
		if err != nil {
			t.Fatal(err)
		}
		if tg.Version() != Package+"@"+version {
			t.Fatalf("version %q", tg.Version())
		}
		s := &targets.Session{Dir: t.TempDir(), Workspace: "/ws", Policy: policy, Command: cmd,
			Patches: []func(map[string]any){func(m map[string]any) { m["network"].(map[string]any)["httpProxyPort"] = 9 }}}
		if mod != nil {
			mod(s)
		}
		inv, err := tg.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	quoted := `'/bin/probe' 'spec file.json'`

	// 0.0.83: srt's own settings, -c.
	inv := prepare("0.0.83", nil)
	if !slices.Equal(inv.Argv[3:], []string{"-c", quoted}) || !strings.Contains(inv.Settings, `"allowedDomains"`) {
		t.Fatalf("0.0.83: %q\n%s", inv.Argv, inv.Settings)
	}
	// 0.0.20: srt's own settings, the command as one argument after --.
	inv = prepare("0.0.20", nil)
	if !slices.Equal(inv.Argv[3:], []string{"--", quoted}) || !strings.Contains(inv.Settings, `"allowWrite"`) {
		t.Fatalf("0.0.20: %q\n%s", inv.Argv, inv.Settings)
	}
	// 0.0.1: Claude Code permission rules, the faults' patches carried over.
	inv = prepare("0.0.1", nil)
	if !slices.Equal(inv.Argv[3:], []string{"--", quoted}) {
		t.Fatalf("0.0.1: %q", inv.Argv)
	}
	var got struct {
		Permissions struct{ Allow, Deny []string }
		Sandbox     struct{ Network map[string]any }
		Network     any
	}
	if err := json.Unmarshal([]byte(inv.Settings), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Permissions.Allow, []string{"WebFetch(domain:allowed.sandcheck.test)", "Edit(/ws)"}) ||
		!slices.Equal(got.Permissions.Deny, []string{"Read(/secret)"}) || got.Sandbox.Network["httpProxyPort"] != float64(9) || got.Network != nil {
		t.Fatalf("0.0.1 settings:\n%s", inv.Settings)
	}
	// Without settings and with a given file, the command form still follows the release.
	if inv := prepare("0.0.1", func(s *targets.Session) { s.NoSettings = true }); !slices.Equal(inv.Argv[1:], []string{"--", quoted}) {
		t.Fatalf("0.0.1 without settings: %q", inv.Argv)
	}
	if inv := prepare("0.0.50", func(s *targets.Session) { s.SettingsFile = "/given.json" }); !slices.Equal(inv.Argv[1:], []string{"--settings", "/given.json", "-c", quoted}) {
		t.Fatalf("0.0.50 with a given file: %q", inv.Argv)
	}
}

func TestPermissionsKeepsOtherKeys(t *testing.T) {
	got := Permissions(map[string]any{
		"network":          map[string]any{"allowedDomains": []any{"a.example"}, "deniedDomains": []any{"b.example"}, "allowUnixSockets": []any{"/s"}},
		"filesystem":       map[string]any{"allowWrite": []string{"/w"}, "denyWrite": []string{"/w/x"}, "denyRead": []string{}},
		"ignoreViolations": map[string]any{"*": []any{"/usr"}},
		"somethingElse":    true,
	})
	b, _ := json.Marshal(got)
	want := `{"permissions":{"allow":["WebFetch(domain:a.example)","Edit(/w)"],"deny":["WebFetch(domain:b.example)","Edit(/w/x)"]},` +
		`"sandbox":{"ignoreViolations":{"*":["/usr"]},"network":{"allowUnixSockets":["/s"]}},"somethingElse":true}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// TestPortRulesFromTheirRelease: allowedDomains entries naming a port (host:port) are read from
// srt 0.0.68 on; 0.0.60 to 0.0.67 refuse the whole file for one ("Invalid domain pattern",
// measured here), earlier releases fall back to their all-deny default. A release before it does
// not claim port-rules, so no policy hands it a port and the ports class is not-applicable there.
func TestPortRulesFromTheirRelease(t *testing.T) {
	for version, want := range map[string]bool{"0.0.20": false, "0.0.62": false, "0.0.67": false, "0.0.68": true, "0.0.83": true} {
		tg, err := New(fakeInstall(t, version))
		if err != nil {
			t.Fatal(err)
		}
		if got := targets.Has(tg, model.CapPortRules); got != want {
			t.Errorf("srt %s claims port-rules: %v, want %v", version, got, want)
		}
		// Not-applicable names the release, and the one that claims it.
		if why := targets.Unclaimed(tg, model.CapPortRules); !want && why != "srt "+version+" does not claim port-rules (srt claims it from 0.0.68)" {
			t.Errorf("srt %s: %q", version, why)
		}
		// Lacks says the same where the release does not claim it, nothing where it does or
		// where nothing is needed.
		if why := targets.Lacks(tg, model.CapPortRules); (why == "") != want || (!want && why != targets.Unclaimed(tg, model.CapPortRules)) {
			t.Errorf("srt %s lacks port-rules: %q", version, why)
		}
		if why := targets.Lacks(tg, ""); why != "" {
			t.Errorf("srt %s lacks nothing needed: %q", version, why)
		}
	}
}

// TestCredentialsFromTheirRelease: srt reads a credentials section from 0.0.56 (mode deny only:
// 0.0.56 and 0.0.57 refuse mask, "not supported yet"), masks environment variables with
// per-secret injectHosts and allowPlaintextInject from 0.0.58, files from 0.0.61 (0.0.58 to
// 0.0.60 refuse a masked file, "not supported for files yet"): read in each release's
// sandbox-config.js, and 0.0.58's refusal seen here.
func TestCredentialsFromTheirRelease(t *testing.T) {
	for version, want := range map[string][3]bool{"0.0.55": {}, "0.0.56": {true, false, false}, "0.0.57": {true, false, false},
		"0.0.58": {true, true, false}, "0.0.60": {true, true, false}, "0.0.61": {true, true, true}, "0.0.68": {true, true, true}, "0.0.83": {true, true, true}} {
		tg, err := New(fakeInstall(t, version))
		if err != nil {
			t.Fatal(err)
		}
		got := [3]bool{targets.Has(tg, model.CapCredentials), targets.Has(tg, model.CapCredentialMasking), targets.Has(tg, model.CapFileMasking)}
		if got != want {
			t.Errorf("srt %s claims credentials, masking, file masking: %v, want %v", version, got, want)
		}
		if got := targets.Has(tg, model.CapPortRules); got != (version >= "0.0.68") {
			t.Errorf("srt %s claims port-rules: %v", version, got)
		}
	}
	tg, _ := New(fakeInstall(t, "0.0.83"))
	for c, from := range map[model.Capability]string{model.CapParentProxy: "0.0.43", model.CapCredentials: "0.0.56", model.CapCredentialMasking: "0.0.58", model.CapFileMasking: "0.0.61", model.CapPortRules: "0.0.68", model.CapNestedUserns: "0.0.80"} {
		if got := tg.ClaimedFrom(c); got != from {
			t.Errorf("%s claimed from %q, want %s", c, got, from)
		}
	}
}
