package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLimitsReadings: the limits class (information only) tells a sandbox that limits from one
// that does not, from the host's counters. The same bubblewrap sandbox, healthy (bwrap: nothing
// limited, each measurement stopped by the trial's own bound) and started under resource limits
// (the command target with prlimit before bwrap: 64 processes of the user's, 16 MiB files,
// 256 MiB of data), two trials each, every reading as expected in every trial.
func TestLimitsReadings(t *testing.T) {
	requireSandbox(t)
	limited, _ := json.Marshal(map[string]any{
		"argv": []string{"prlimit", "--nproc=64", "--fsize=16777216", "--data=268435456", "--",
			"bwrap", "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--bind", "{{.Workspace}}", "{{.Workspace}}", "--chdir", "{{.Workspace}}", "--", "env", "TMPDIR={{.Workspace}}", "{{.Argv}}"},
		"capabilities": []string{"deny-all-network", "writable-paths"},
		"reach":        []string{},
	})
	const n = 2
	for _, c := range []struct {
		target string
		env    []string
		want   map[string]string // scenario -> what every trial's hint starts with
	}{
		{"bwrap", nil, map[string]string{
			"processes": "not limited: ", "memory": "not limited: ", "disk": "not limited: ",
		}},
		{"command", []string{"SANDCHECK_TARGET_SETTINGS=" + string(limited)}, map[string]string{
			"processes": "limited by the sandbox: ", "memory": "limited by the sandbox: ", "disk": "limited by the sandbox: 16 MiB written, then EFBIG",
		}},
	} {
		_, rows := runReportRows(t, c.env, "-n", "2", "--user", "unprivileged", "--label-filter", "bypass-limits", "--target", c.target)
		seen := map[string]int{}
		for key, vs := range rows {
			_, scenario, _ := strings.Cut(key, "\x00")
			measure, ok := strings.CutPrefix(scenario, "bypass/limits/")
			if !ok {
				continue
			}
			for _, v := range vs {
				seen[measure]++
				if !v.Pass || v.Trouble != "" || !strings.HasPrefix(v.Hint, c.want[measure]) {
					t.Errorf("%s %s, %s: %s %q (trouble %q); want a pass reading %q...", c.target, scenario, v.trialRef, v.Outcome, v.Hint, v.Trouble, c.want[measure])
				}
			}
		}
		for measure := range c.want {
			if seen[measure] != n {
				t.Errorf("%s bypass/limits/%s: %d trials read, want %d", c.target, measure, seen[measure], n)
			}
		}
	}
}
