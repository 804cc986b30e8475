package claudecode

import (
	"strings"

	"github.com/sandcheck/sandcheck/targets"
)

// Settings is Claude Code's settings for a policy: a sandbox object with the bundled runtime's
// network and filesystem keys (the same keys srt's own file has, nested under sandbox), enabled,
// failing closed when the sandbox is unavailable, and never running a command unsandboxed.
// userFile, when given, is the user's own settings.json: its keys are kept (their enabled,
// failIfUnavailable and allowUnsandboxedCommands included), the fixture's allowed hosts are
// added to their allow-list and the workspace to their writable paths. Patches (faults) see the
// runtime's part in srt's shape ({"network": ..., "filesystem": ...}), as they do for srt.
func Settings(p targets.Policy, userFile string, patches []func(map[string]any)) (map[string]any, error) {
	s, err := targets.ReadSettings(userFile, "Claude Code settings")
	if err != nil {
		return nil, err
	}
	sb := targets.SettingsObject(s, "sandbox")
	for k, v := range map[string]any{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false} {
		if _, ok := sb[k]; !ok {
			sb[k] = v
		}
	}
	net, fs := targets.SettingsObject(sb, "network"), targets.SettingsObject(sb, "filesystem")
	targets.SettingsAdd(net, "allowedDomains", p.AllowedHosts)
	targets.SettingsAdd(fs, "allowWrite", p.WritablePaths)
	targets.SettingsAdd(fs, "denyRead", p.DenyRead)
	if p.WeakerNesting {
		sb["enableWeakerNestedSandbox"] = true
	}
	runtime := map[string]any{"network": net, "filesystem": fs}
	for _, patch := range patches {
		patch(runtime)
	}
	sb["network"], sb["filesystem"] = runtime["network"], runtime["filesystem"]
	return s, nil
}

// override sets dotted keys of m ("network.strictAllowlist"); a nil value deletes the key.
func override(m map[string]any, with map[string]any) {
	for k, v := range with {
		at := m
		parts := strings.Split(k, ".")
		for _, p := range parts[:len(parts)-1] {
			at = targets.SettingsObject(at, p)
		}
		if v == nil {
			delete(at, parts[len(parts)-1])
			continue
		}
		at[parts[len(parts)-1]] = v
	}
}
