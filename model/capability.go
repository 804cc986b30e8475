package model

// Capability is something a sandbox can express.
type Capability string

const (
	CapProxyAllowList Capability = "proxy-allow-list" // domain allow-list enforced by a proxy
	CapDenyAllNet     Capability = "deny-all-network"
	CapWritablePaths  Capability = "writable-paths"
	CapDenyRead       Capability = "deny-read"
	// CapProtectedFiles: the sandbox keeps files inside the writable workspace that configure
	// later programs (.bashrc, .git/hooks, .vscode, .mcp.json ...) read-only, as srt does.
	CapProtectedFiles Capability = "protected-files"
	// CapSettingsFile: the sandbox reads its policy from a settings file of its own, which a
	// user can get wrong (missing, empty, invalid): the untrusted-configuration scenario.
	CapSettingsFile Capability = "settings-file"
)
