package orchestrate

import (
	"slices"
	"strings"
	"testing"
)

// --target values become matrix targets: versions of one name grouped, oldest flag first.
func TestFlagTargetsGroupVersionsByName(t *testing.T) {
	ts, err := FlagTargets([]string{"srt@0.0.60", "bwrap", "srt@latest", "srt@last:3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].ID != "srt" || ts[1].ID != "bwrap" || len(ts[1].Versions) != 0 {
		t.Fatalf("targets %+v", ts)
	}
	var got []string
	for _, v := range ts[0].Versions {
		got = append(got, v.Text+" ("+v.Field+")")
	}
	if !slices.Equal(got, []string{"0.0.60 (--target srt@0.0.60)", "latest (--target srt@latest)", "last:3 (--target srt@last:3)"}) {
		t.Fatalf("srt versions %q", got)
	}
	// A bare name beside versions of it is its pinned install.
	ts, err = FlagTargets([]string{"srt", "srt@0.0.60"})
	if err != nil || len(ts) != 1 || len(ts[0].Versions) != 2 || ts[0].Versions[0].Text != "pinned" {
		t.Fatalf("srt + srt@0.0.60: %+v %v", ts, err)
	}
	for _, bad := range []struct{ arg, want string }{
		{"bwrap@0.8.0", "bwrap is not installed from a registry"},
		{"srt@0.0.x!", `"0.0.x!" is not a version`},
		{"nosuch@1.0.0", `unknown target "nosuch"`},
	} {
		if _, err := FlagTargets([]string{bad.arg}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("--target %s: %v, want %q", bad.arg, err, bad.want)
		}
	}
}
