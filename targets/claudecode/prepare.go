package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/scriptedmodel"
	"github.com/sandcheck/sandcheck/targets"
)

// Prompt is the user's turn; the scripted model answers it with the probe's tool call whatever
// it says.
const Prompt = "Run the sandcheck probe with the Bash tool."

// DummyKey is the API key Claude Code is given: the scripted model accepts any.
const DummyKey = "sk-ant-sandcheck-scripted-model-dummy-key"

// Prepare lays out the run (HOME, settings, trust), starts the scripted model and returns
// `claude -p PROMPT [permission flags] [--allowedTools Bash]` with its environment. The
// invocation's Agent hands back what the Bash tool returned.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	opt, _ := s.Adapter.(Options)
	if opt.Permission == "" {
		opt.Permission = t.permission
	}
	if opt.Permission == "" {
		opt.Permission = PermissionDefault
	}
	if err := opt.check(); err != nil {
		return nil, fmt.Errorf("claude-code options: %w", err)
	}
	home := filepath.Join(s.Dir, "claude-home")
	if h := scenarioHome(s.Env); h != "" {
		home = h // the scenario's own HOME: fresh, read-only
	}
	lay := &layout{home: home, ws: s.Workspace, dir: s.Dir}
	var flagFile, settingsText string
	switch {
	case s.NoSettings:
		// Claude Code's own defaults in the HOME the scenario gave: nothing written at all.
		settingsText = "(none: Claude Code's defaults, HOME " + home + ")"
		opt.Trust = TrustNone
	case s.SettingsFile != "":
		// The settings argument points at the scenario's file, whatever it holds (or is).
		flagFile = s.SettingsFile
		if b, err := os.ReadFile(s.SettingsFile); err == nil {
			settingsText = string(b)
			// Given, not written: laid out with the rest, so a reproducer can give it again.
			if fi, err := os.Stat(s.SettingsFile); err == nil && fi.Mode().IsRegular() {
				lay.files = append(lay.files, targets.File{Path: s.SettingsFile, Text: settingsText, Mode: uint32(fi.Mode().Perm())})
			}
		} else {
			settingsText = fmt.Sprintf("(%s: %v)", s.SettingsFile, err)
		}
	default:
		settings, err := Settings(s.Policy, s.UserSettings, s.Patches)
		if err != nil {
			return nil, err
		}
		override(settings["sandbox"].(map[string]any), opt.Sandbox)
		b, err := json.MarshalIndent(settings, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode Claude Code settings: %w", err)
		}
		settingsText = string(b)
		file, err := lay.write(opt.source(), b)
		if err != nil {
			return nil, err
		}
		if opt.source() == SourceFlag {
			flagFile = file
		}
	}
	for _, src := range keys(opt.Layers) {
		file, err := lay.write(src, []byte(opt.Layers[src]))
		if err != nil {
			return nil, err
		}
		if src == SourceFlag {
			flagFile = file
		}
	}
	if err := lay.trust(opt.trust()); err != nil {
		return nil, err
	}
	ln, err := s.Loopback()
	if err != nil {
		return nil, fmt.Errorf("scripted model: listen: %w", err)
	}
	srv := scriptedmodel.Serve(ln, scriptedmodel.Script{Command: targets.ShellJoin(s.Command), Input: opt.ToolInput})
	argv := []string{t.path, "-p", Prompt}
	switch opt.Permission {
	case PermissionDefault:
	case PermissionBypass:
		argv = append(argv, "--dangerously-skip-permissions")
	default:
		argv = append(argv, "--permission-mode", opt.Permission)
	}
	if !opt.NoAllowList {
		argv = append(argv, "--allowedTools", "Bash")
	}
	if flagFile != "" {
		argv = append(argv, "--settings", flagFile)
	}
	return &targets.Invocation{
		Argv:       argv,
		Env:        Env(withParent(s.Env, s.Policy.ParentProxy), home, srv.URL()),
		Dir:        s.Workspace,
		Settings:   settingsText,
		Layout:     lay.files,
		AgentInput: opt.ToolInput,
		Agent:      agent(srv),
	}, nil
}

// Env is the session's environment for Claude Code: HOME, the scripted model's URL and a dummy
// key, nothing non-essential sent anywhere, and none of the caller's own Claude Code or API
// settings (a sandcheck started from inside Claude Code must not hand its session down). The
// scripted model stands where the model service would; a caller's proxy variables must not stand
// between Claude Code and it, so loopback joins NO_PROXY when the caller has a proxy (inside the
// sandbox, Claude Code sets its own proxy variables).
func Env(env []string, home, baseURL string) []string {
	out := make([]string, 0, len(env)+10)
	proxied := false
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case k == "HOME" || k == "CLAUDECODE" || strings.HasPrefix(k, "CLAUDE_") || strings.HasPrefix(k, "ANTHROPIC_"):
			continue
		case strings.EqualFold(k, "NO_PROXY"):
			continue
		case strings.EqualFold(k, "HTTP_PROXY") || strings.EqualFold(k, "HTTPS_PROXY") || strings.EqualFold(k, "ALL_PROXY"):
			proxied = true
		}
		out = append(out, e)
	}
	if proxied {
		noProxy := "127.0.0.1,localhost"
		if v := lastValue(env, "NO_PROXY", "no_proxy"); v != "" {
			noProxy = v + "," + noProxy
		}
		out = append(out, "NO_PROXY="+noProxy, "no_proxy="+noProxy)
	} else {
		for _, e := range env {
			if k, _, _ := strings.Cut(e, "="); strings.EqualFold(k, "NO_PROXY") {
				out = append(out, e)
			}
		}
	}
	return append(out, "HOME="+home, "ANTHROPIC_BASE_URL="+baseURL, "ANTHROPIC_API_KEY="+DummyKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1")
}

// withParent is env with a parent proxy (targets.Policy.ParentProxy) as the caller's proxy
// variables: Claude Code's settings have no key for one, and its bundled runtime takes the
// caller's HTTP(S)_PROXY as its parent, as a user behind a company's proxy has them set.
func withParent(env []string, parent string) []string {
	if parent == "" {
		return env
	}
	out := slices.DeleteFunc(slices.Clone(env), func(e string) bool {
		k, _, _ := strings.Cut(e, "=")
		return strings.EqualFold(k, "HTTP_PROXY") || strings.EqualFold(k, "HTTPS_PROXY")
	})
	return append(out, "HTTP_PROXY="+parent, "HTTPS_PROXY="+parent, "http_proxy="+parent, "https_proxy="+parent)
}

// lastValue is the last value env gives any of names.
func lastValue(env []string, names ...string) string {
	v := ""
	for _, e := range env {
		k, val, _ := strings.Cut(e, "=")
		for _, n := range names {
			if k == n {
				v = val
			}
		}
	}
	return v
}

// scenarioHome is a HOME the scenario set over the account's (a later HOME= in env), or "".
func scenarioHome(env []string) string {
	var homes []string
	for _, e := range env {
		if h, ok := strings.CutPrefix(e, "HOME="); ok {
			homes = append(homes, h)
		}
	}
	if len(homes) > 1 {
		return homes[len(homes)-1]
	}
	return ""
}

// layout is where one run's Claude Code files go, and what was written there.
type layout struct {
	home, ws, dir string
	files         []targets.File
}

// path of a settings source's file.
func (l *layout) path(source string) string {
	switch source {
	case SourceProject:
		return filepath.Join(l.ws, ".claude", "settings.json")
	case SourceLocal:
		return filepath.Join(l.ws, ".claude", "settings.local.json")
	case SourceManaged:
		return filepath.Join(l.dir, ManagedDir, "claude-code", "managed-settings.json")
	case SourceFlag:
		return filepath.Join(l.dir, "claude-flag-settings.json")
	}
	return filepath.Join(l.home, ".claude", "settings.json")
}

func (l *layout) write(source string, b []byte) (string, error) {
	p := l.path(source)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("claude-code %s settings: %w", source, err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", fmt.Errorf("claude-code %s settings: %w", source, err)
	}
	l.files = append(l.files, targets.File{Path: p, Text: string(b), Mode: 0o644})
	return p, nil
}

// trust writes ~/.claude.json with the workspace's trust state (nothing for TrustNone).
func (l *layout) trust(state string) error {
	if state == TrustNone {
		return os.MkdirAll(l.home, 0o755)
	}
	doc := map[string]any{"projects": map[string]any{l.ws: map[string]any{
		"hasTrustDialogAccepted": state == TrustAccepted}}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.MkdirAll(l.home, 0o755); err != nil {
		return fmt.Errorf("claude-code HOME: %w", err)
	}
	p := filepath.Join(l.home, ".claude.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("claude-code trust state: %w", err)
	}
	l.files = append(l.files, targets.File{Path: p, Text: string(b), Mode: 0o600})
	return nil
}
