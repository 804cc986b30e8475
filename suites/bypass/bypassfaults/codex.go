package bypassfaults

import (
	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/model"
)

// Codex's known-bads for the classes only it claims: its configuration (the -c overrides the
// adapter writes) is its one seam, and each fault turns one promise of its proxy off there.
func init() {
	profileFault("methods-ignored",
		"the proxy forgets its reading-methods-only rule: Codex's network mode back to full (every method to an allowed host)",
		"network", func(n map[string]any) {
			if n["mode"] != nil {
				n["mode"] = "full"
			}
		})
	profileFault("private-guard-off",
		"the proxy dials names that resolve to local or private addresses: Codex's allow_local_binding on",
		"network", func(n map[string]any) { n["allow_local_binding"] = true })
	profileFault("project-roots-off",
		"the working directory is writable as a plain path, not as the profile's project root: "+
			"Codex keeps .codex and .git read-only only under project roots",
		"filesystem", func(fs map[string]any) { delete(fs, ":project_roots") })
}

// profileFault registers a fault that changes the table named table (network, filesystem) of
// every permission profile in Codex's configuration with patch.
func profileFault(name, summary, table string, patch func(map[string]any)) {
	settingsFault("codex", name, summary, func(s map[string]any) {
		for _, t := range profileTables(s, table) {
			patch(t)
		}
	})
}

// settingsFault registers a bypass fault that only patches the settings a target of format
// writes (a configuration the sandbox reads), and makes it non-enforcing.
func settingsFault(format, name, summary string, patch func(map[string]any)) {
	faults.Register(&faults.Fault{
		Name:    name,
		Summary: summary,
		Expect:  model.NonEnforcing,
		Seams:   []model.Seam{model.SettingsFormat(format)},
		Scope:   faults.ScopeBypass,
	}, func(in *faults.Injection) error {
		in.Add(faults.WithSettingsPatch(patch))
		return nil
	})
}

// profileTables are the tables named table (network, filesystem) of Codex's permission profiles
// in its configuration.
func profileTables(s map[string]any, table string) []map[string]any {
	var out []map[string]any
	profiles, _ := s["permissions"].(map[string]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		if n, ok := profile[table].(map[string]any); ok {
			out = append(out, n)
		}
	}
	return out
}
