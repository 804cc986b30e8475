package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Two published srt releases, driven in their own shapes: 0.0.1 reads Claude Code's permission
// rules and takes the command as joined arguments; 0.0.66 is the first release of a run (0.0.66 ..
// 0.0.75) that fails to start as root on this machine (its seccomp helper cannot write
// /proc/self/uid_map), which the version table shows as a sandbox-failed band. Each is installed
// into the npm cache once; make test installs these two and no more.
const (
	oldShape   = "0.0.1"
	rootFailed = "0.0.66"
)

func TestVersionsRealReleases(t *testing.T) {
	requireSandbox(t)
	out := t.TempDir()
	args := []string{"run", "--plain", "--out", out, "--target", "srt@" + oldShape, "--target", "srt@" + rootFailed,
		"-n", "2", "-j", "2", "--label-filter", "network && seed", "--user", "root"} // 0.0.66 refuses root only
	// A TMPDIR of this test's own: releases 0.0.62 to 0.0.79 of srt leave a socket in $TMPDIR
	// after every run (0.0.80 removes it), which the leftover check would rightly blame on us.
	env := []string{"TMPDIR=" + t.TempDir()}
	_, stderr, code := sandcheckExit(t, env, args...)
	if code != 1 { // 0.0.66 fails every trial here, outside any known finding
		t.Fatalf("exit %d, want 1:\n%s", code, stderr)
	}
	rep, err := schema.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	seed := map[string]schema.Cell{}
	for _, c := range rep.Cells {
		if c.Scenario == "network/seed" {
			seed[c.Version] = c
		}
	}
	if c := seed[oldShape]; c.Outcomes["correct"] != 2 {
		t.Fatalf("srt %s network/seed: %v %s (the permission-rules settings and joined command must drive it)", oldShape, c.Outcomes, why(c))
	}
	c := seed[rootFailed]
	if c.Outcomes["sandbox-failed"] != 2 || !strings.Contains(why(c), "uid_map") {
		t.Fatalf("srt %s network/seed: %v %s (as root here it fails to start)", rootFailed, c.Outcomes, why(c))
	}
	// The version is in the journal's cells and in what the trials say they ran.
	for _, r := range journalRecords(t, out) {
		cell := r["cell"].(map[string]any)
		if compact, _ := r["compact"].(bool); compact {
			continue // a compact record keeps no evidence; the cell's first trial does
		}
		ev, _ := json.Marshal(r["evidence"])
		if v, _ := cell["version"].(string); v == "" || !strings.Contains(string(ev), "sandbox-runtime@"+v+`"`) {
			t.Fatalf("record of cell %v: evidence does not name srt %v", cell, cell["version"])
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// network/seed fails at 0.0.66 only because it never started: the band says so, no row does.
	for _, want := range []string{"## Versions", "2 versions, " + oldShape + " .. " + rootFailed, "- **" + rootFailed + "**: the sandbox failed to start",
		"3 scenario(s) passed in every version they ran in"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A second run installs nothing.
	args[3] = t.TempDir()
	_, stderr, _ = sandcheckExit(t, env, args...)
	if !strings.Contains(stderr, "0 installed") || !strings.Contains(stderr, "2 from the cache") {
		t.Fatalf("second run:\n%s", stderr)
	}
}

// TestBisectRealReleases finds where srt started failing as root here: between 0.0.64 and 0.0.68
// the first such release is 0.0.66 (its dist adds the seccomp helper's user-namespace setup). Long
// tier: it installs up to five releases.
func TestBisectRealReleases(t *testing.T) {
	requireSandbox(t)
	skip.UnlessLong(t, "installs up to five srt releases")
	out := t.TempDir()
	stdout, stderr, code := sandcheckExit(t, []string{"TMPDIR=" + t.TempDir()}, "bisect", "--target", "srt", "--label-filter", "network && seed",
		"--good", "0.0.64", "--bad", "0.0.68", "-n", "4", "--user", "root", "--out", out, "--json")
	var res struct {
		FirstBad    string `json:"first_bad"`
		LastGood    string `json:"last_good"`
		Trials      int    `json:"trials"`
		SweepTrials int    `json:"sweep_trials"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if code != 0 || res.FirstBad != "0.0.66" || res.LastGood != "0.0.65" || res.Trials >= res.SweepTrials {
		t.Fatalf("exit %d: %+v\n%s\n%s", code, res, stdout, stderr)
	}
	t.Logf("bisect: %d trials (a sweep of the five at the endpoints' N: %d)", res.Trials, res.SweepTrials)
}
