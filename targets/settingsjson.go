package targets

import (
	"encoding/json"
	"fmt"
	"os"
)

// Helpers for the JSON settings objects adapters generate (over a user's own file) and faults
// patch (srt's and Claude Code's settings files): decoded JSON keeps lists as []any, generated
// settings as []string.

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

// ReadSettings reads a user's own JSON settings file as an object, the base generated settings
// are merged over; what names the file in errors ("srt settings"). No file ("") is an empty object.
func ReadSettings(file, what string) (map[string]any, error) {
	s := map[string]any{}
	if file == "" {
		return s, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, file, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse %s %s: %w", what, file, err)
	}
	return s, nil
}

// SettingsAdd adds to the list m[key] the entries of add it lacks (union).
func SettingsAdd(m map[string]any, key string, add []string) {
	m[key] = union(SettingsStrings(m[key]), add)
}

// union is a then the entries of b not in a, each once, in order; never nil (a settings file
// writes an empty list, not null).
func union(a, b []string) []string {
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
