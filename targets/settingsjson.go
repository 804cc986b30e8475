package targets

// Helpers for the JSON settings objects adapters generate and faults patch (srt's and Claude
// Code's settings files): decoded JSON keeps lists as []any, generated settings as []string.

// SettingsObject returns m[key] as an object, creating it (empty) when it is absent or not one.
func SettingsObject(m map[string]any, key string) map[string]any {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

// SettingsStrings reads a settings list, []string or decoded []any (its strings only), as a
// fresh slice.
func SettingsStrings(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, l...)
	}
	return out
}

// Union is a then the entries of b not in a, each once, in order; never nil (a settings file
// writes an empty list, not null).
func Union(a, b []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, x := range append(append([]string{}, a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
