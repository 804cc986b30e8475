package claudecode

import (
	"fmt"
	"slices"
	"strings"
)

// Options vary one run in ways only Claude Code has. The claude-settings scenarios set them as
// targets.Session.Adapter; every other scenario runs with the zero value.
type Options struct {
	// Permission is the permission mode: "" the target's (settings.permission_mode),
	// PermissionDefault (no flag: Claude Code's own default), PermissionBypass
	// (--dangerously-skip-permissions, the seed's), or a --permission-mode value.
	Permission string
	// NoAllowList leaves out --allowedTools Bash.
	NoAllowList bool
	// Sandbox is merged over the generated settings' sandbox object; a dotted key reaches into it
	// ("network.strictAllowlist": true). A nil value deletes the key.
	Sandbox map[string]any
	// ToolInput is more Bash tool input from the model (dangerouslyDisableSandbox: true).
	ToolInput map[string]any
	// Trust is the workspace's trust state in ~/.claude.json: TrustAccepted (default),
	// TrustDeclined, or TrustNone (no ~/.claude.json at all).
	Trust string
	// Source is where the generated settings are written: SourceUser (default), SourceProject,
	// SourceLocal, SourceManaged (ManagedDir, which the scenario mounts over /etc) or SourceFlag.
	Source string
	// Layers are more settings files, by source, written verbatim (JSON text, or anything: an
	// invalid file is a scenario too), beside the generated ones.
	Layers map[string]string
}

// Permission modes besides --permission-mode's own values.
const (
	PermissionDefault = "default" // no flag: Claude Code's default mode
	PermissionBypass  = "bypass"  // --dangerously-skip-permissions
)

// PermissionModes are --permission-mode's values (2.1.215 and 2.1.332 list the same).
var PermissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"}

func checkPermission(p string) error {
	if p == "" || p == PermissionDefault || p == PermissionBypass || slices.Contains(PermissionModes, p) {
		return nil
	}
	return fmt.Errorf("%q: want %q, %q or a --permission-mode value (%s)", p, PermissionDefault, PermissionBypass, strings.Join(PermissionModes, ", "))
}

// Trust states.
const (
	TrustAccepted = "trusted"   // projects[ws].hasTrustDialogAccepted: true
	TrustDeclined = "untrusted" // projects[ws].hasTrustDialogAccepted: false
	TrustNone     = "fresh"     // no ~/.claude.json: a HOME Claude Code never ran in
)

// Settings sources, Claude Code's names for them.
const (
	SourceUser    = "user"    // ~/.claude/settings.json
	SourceProject = "project" // <workspace>/.claude/settings.json
	SourceLocal   = "local"   // <workspace>/.claude/settings.local.json
	SourceManaged = "managed" // /etc/claude-code/managed-settings.json (see ManagedDir)
	SourceFlag    = "flag"    // --settings FILE
)

// Sources in Claude Code's order of precedence, lowest first.
var Sources = []string{SourceUser, SourceProject, SourceLocal, SourceFlag, SourceManaged}

// ManagedDir is the directory a run's managed settings are written under, relative to the
// session's directory: ManagedDir/claude-code/managed-settings.json. Claude Code reads them from
// /etc/claude-code; a scenario lays this directory over /etc in the run's private mount
// namespace (an overlay), so the host's /etc is never written.
const ManagedDir = "claude-managed-etc"

func (o Options) trust() string {
	if o.Trust == "" {
		return TrustAccepted
	}
	return o.Trust
}

func (o Options) source() string {
	if o.Source == "" {
		return SourceUser
	}
	return o.Source
}

func (o Options) check() error {
	if err := checkPermission(o.Permission); err != nil {
		return err
	}
	switch o.trust() {
	case TrustAccepted, TrustDeclined, TrustNone:
	default:
		return fmt.Errorf("trust %q: want %s, %s or %s", o.Trust, TrustAccepted, TrustDeclined, TrustNone)
	}
	for _, s := range append([]string{o.source()}, keys(o.Layers)...) {
		if !slices.Contains(Sources, s) {
			return fmt.Errorf("settings source %q: want one of %s", s, strings.Join(Sources, ", "))
		}
	}
	return nil
}

func keys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}
