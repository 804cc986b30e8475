package targets

// NPM says where versions of an adapter's sandbox come from: a package on npm and the executable
// it provides. Adapters of npm-installed sandboxes register one, so `--target NAME@VERSION` and a
// matrix's versions: can install any published version (targets/npmcache) and hand the adapter
// that version's executable as its path.
type NPM struct {
	Package string // e.g. @anthropic-ai/sandbox-runtime
	Bin     string // e.g. srt
	// IgnoreScripts installs without lifecycle scripts (pure JavaScript, nothing to build).
	IgnoreScripts bool
}

var npmPkgs byName[NPM]

// RegisterNPM records the npm package of an adapter; adapters call it from init.
func RegisterNPM(target string, p NPM) { npmPkgs.set(target, p) }

// NPMOf returns the npm package of an adapter, if its sandbox is installed from npm.
func NPMOf(target string) (NPM, bool) { return npmPkgs.get(target) }

// Historian is implemented by adapters that know their sandbox's release history (command-line
// shapes, settings keys): Undrivable says why this build cannot be driven, or "" when it can. A
// trial of an undrivable build reports not-applicable with that reason, never sandbox-failed.
type Historian interface {
	Undrivable() string
}

// UndrivableReason is t's Undrivable, or "" for adapters without a history.
func UndrivableReason(t Target) string {
	if h, ok := t.(Historian); ok {
		return h.Undrivable()
	}
	return ""
}
