// Package command adapts a sandbox sandcheck does not know, from two templates: an argv template
// that wraps the command, and a policy template rendered into a file the sandbox reads.
//
// Matrix settings (targets.Factory hands every value over as a string; list values are given
// as YAML lists in the matrix and reach the adapter JSON-encoded, or can be written as JSON
// strings directly):
//
//	argv:            ["my-sandbox", "--policy", "{{.PolicyFile}}", "--", "sh", "-c", "{{.Command}}"]
//	policy_template: text/template of the policy file (optional; no file when absent)
//	policy_file:     the policy file's name in the session directory (default policy)
//	capabilities:    ["deny-all-network", "writable-paths", "deny-read", "proxy-allow-list", ...]
//	reach:           channels the allowed host must be reachable on: ["http", "https", "socks",
//	                 "direct", "dns"]; empty = a deny-all sandbox
//	version:         what reports show as the sandbox version (default: the argv's program)
//
// Template data, for both templates:
//
//	{{.Command}}       the command as one shell-quoted string (for `sh -c`)
//	{{.Argv}}          the command's argv; an argv element that is exactly "{{.Argv}}" splices it
//	{{.PolicyFile}}    the rendered policy file
//	{{.Workspace}}     the working directory (writable)
//	{{.AllowedHosts}}, {{.WritablePaths}}, {{.DenyRead}}   the policy, as lists
//	{{.Dir}}           the session's private directory
//
// plus functions json (any value as JSON) and join (strings.Join).
//
// # Claude Code's Bash sandbox
//
// Claude Code sandboxes its Bash tool with sandbox-runtime (the `srt` target), configured from
// the `sandbox` section of its settings. Starting `claude` itself needs a login and a model turn,
// so the way to test what its Bash tool runs under is to drive the same runtime with the same
// policy shape through this adapter:
//
//	argv: ["srt", "--settings", "{{.PolicyFile}}", "-c", "{{.Command}}"]
//	policy_template: |
//	  {"network": {"allowedDomains": {{json .AllowedHosts}}, "deniedDomains": []},
//	   "filesystem": {"allowWrite": {{json .WritablePaths}}, "denyRead": {{json .DenyRead}}, "denyWrite": []}}
//	capabilities: ["proxy-allow-list", "writable-paths", "deny-read"]
//	reach: ["http", "https", "socks"]
//
// Replace the template with the settings your Claude Code installation actually produces (its
// sandbox keys, your allowed domains) to check that exact configuration.
package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// Name of the adapter in matrices and on the command line.
const Name = "command"

func init() {
	targets.Register(Name, func(s map[string]string) (targets.Target, error) { return New(s) })
	// Its settings are the whole adapter: check them where they are written (a matrix's
	// file:line, --target-settings), before any trial runs.
	targets.RegisterCheck(Name, func(s map[string]string) error { _, err := New(s); return err })
}

// Target is a templated sandbox.
type Target struct {
	argv    []*template.Template
	splice  []bool // argv element i is exactly {{.Argv}}
	policy  *template.Template
	file    string
	caps    []model.Capability
	reach   []string
	version string
	start   string // argv[0] when it is literal (no template action): what every session starts
}

// Data is what the templates see.
type Data struct {
	Command       string
	Argv          []string
	PolicyFile    string
	Workspace     string
	Dir           string
	AllowedHosts  []string
	WritablePaths []string
	DenyRead      []string
}

var funcs = template.FuncMap{
	"json": func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err },
	"join": strings.Join,
}

// New builds the adapter from its settings.
func New(s map[string]string) (*Target, error) {
	var argv []string
	if err := list(s, "argv", &argv); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("command target: settings.argv is required, e.g. [\"my-sandbox\", \"--\", \"sh\", \"-c\", \"{{.Command}}\"]")
	}
	t := &Target{file: s["policy_file"], version: s["version"]}
	if t.file == "" {
		t.file = "policy"
	}
	if strings.ContainsRune(t.file, '/') {
		return nil, fmt.Errorf("command target: settings.policy_file %q: want a file name, not a path", t.file)
	}
	for i, a := range argv {
		tpl, err := template.New(fmt.Sprintf("argv[%d]", i)).Funcs(funcs).Option("missingkey=error").Parse(a)
		if err != nil {
			return nil, fmt.Errorf("command target: settings.argv[%d]: %w", i, err)
		}
		t.argv = append(t.argv, tpl)
		t.splice = append(t.splice, strings.TrimSpace(a) == "{{.Argv}}")
	}
	if p := s["policy_template"]; p != "" {
		tpl, err := template.New("policy_template").Funcs(funcs).Option("missingkey=error").Parse(p)
		if err != nil {
			return nil, fmt.Errorf("command target: settings.policy_template: %w", err)
		}
		t.policy = tpl
	}
	var caps []string
	if err := list(s, "capabilities", &caps); err != nil {
		return nil, err
	}
	for i, c := range caps {
		cp, err := model.ParseCapability(c)
		if err != nil {
			return nil, fmt.Errorf("command target: settings.capabilities[%d]: %w", i, err)
		}
		t.caps = append(t.caps, cp)
	}
	if err := list(s, "reach", &t.reach); err != nil {
		return nil, err
	}
	for i, ch := range t.reach {
		if !slices.Contains(model.AllChannels, ch) {
			return nil, fmt.Errorf("command target: settings.reach[%d]: unknown channel %q (known: %s)", i, ch, strings.Join(model.AllChannels, ", "))
		}
	}
	if t.version == "" {
		t.version = "command: " + argv[0]
	}
	if !strings.Contains(argv[0], "{{") {
		t.start = argv[0]
	}
	return t, nil
}

// list decodes a list-valued setting given as a JSON array.
func list(s map[string]string, key string, out *[]string) error {
	v := strings.TrimSpace(s[key])
	if v == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(v), out); err != nil {
		return fmt.Errorf("command target: settings.%s: want a list of strings (JSON-encoded when given as one string): %w", key, err)
	}
	return nil
}

func (t *Target) Name() string                     { return Name }
func (t *Target) Capabilities() []model.Capability { return t.caps }
func (t *Target) Reach() []string                  { return t.reach }
func (t *Target) Version() string                  { return t.version }

// Starts implements targets.Starter: argv[0] when it is literal, "" when a template makes it.
func (t *Target) Starts() string { return t.start }

// Prepare renders the policy file (when there is a template) and the argv.
func (t *Target) Prepare(s *targets.Session) (*targets.Invocation, error) {
	d := Data{
		Command: targets.ShellJoin(s.Command), Argv: s.Command, Workspace: s.Workspace, Dir: s.Dir,
		AllowedHosts: nonNil(s.Policy.AllowedHosts), WritablePaths: nonNil(s.Policy.WritablePaths), DenyRead: nonNil(s.Policy.DenyRead),
	}
	inv := &targets.Invocation{Env: s.Env, Dir: s.Workspace}
	switch {
	case s.SettingsFile != "":
		d.PolicyFile = s.SettingsFile
		if b, err := os.ReadFile(s.SettingsFile); err == nil {
			inv.Settings = string(b)
		}
	case t.policy != nil && !s.NoSettings:
		var buf bytes.Buffer
		if err := t.policy.Execute(&buf, d); err != nil {
			return nil, fmt.Errorf("command target: render policy: %w", err)
		}
		d.PolicyFile = filepath.Join(s.Dir, t.file)
		if err := os.WriteFile(d.PolicyFile, buf.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("command target: write policy: %w", err)
		}
		inv.Settings = buf.String()
	}
	for i, tpl := range t.argv {
		if t.splice[i] {
			inv.Argv = append(inv.Argv, s.Command...)
			continue
		}
		var buf bytes.Buffer
		if err := tpl.Execute(&buf, d); err != nil {
			return nil, fmt.Errorf("command target: render argv[%d]: %w", i, err)
		}
		inv.Argv = append(inv.Argv, buf.String())
	}
	if inv.Settings == "" {
		inv.Settings = strings.Join(inv.Argv, " ") // no policy file: the command line is the policy
	}
	return inv, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
