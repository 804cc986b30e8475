package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// The detector's one rule, end to end: nothing a sandbox does can turn a fail-open into a pass,
// and a known finding never hides a failure that differs from it.

// sandcheckExit runs the built sandcheck with args and returns its output and exit code; it fails
// the test only when the binary could not run at all.
func sandcheckExit(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("sandcheck %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// measured says a `sandcheck run` finished its measurement: exit 0 (every scenario passed or is
// a known finding) or 1 (a failure was measured; the test judges which). 2 (usage), 3 (too much
// harness trouble) and signals are not measurements.
func measured(err error) bool {
	var ee *exec.ExitError
	return err == nil || errors.As(err, &ee) && ee.ExitCode() == 1
}

// TestUnconfinedThenHangs: a "sandbox" that confines nothing and then hangs past the trial's
// deadline. The denied fixture host logged the probe's requests, so every trial is non-enforcing,
// never timeout, and `run` exits 1.
func TestUnconfinedThenHangs(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	mf := filepath.Join(dir, "matrix.yaml")
	matrix := `targets:
  - name: command
    settings:
      argv: ["sh", "-c", "{{.Command}}; sleep 60"]
      capabilities: ["proxy-allow-list"]
      reach: ["http", "https", "socks"]
      version: unconfined-then-hang
hosts:
  - name: local
    kind: local
scenarios: "network && seed"
trials: %d
parallel: 2
timeout: 8s
`
	n := tierTrials() // 20 in the long tier, 5 in make test: an N=20 cell belongs in the long tier
	matrix = fmt.Sprintf(matrix, n)
	if err := os.WriteFile(mf, []byte(matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code := sandcheckExit(t, nil, "run", "--json", "--plain", "--matrix", mf, "--out", out)
	var r runJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("decode run --json: %v\n%s\n%s", err, stdout, stderr)
	}
	if r.Trials != n || r.Outcomes["non-enforcing"] != n {
		t.Errorf("outcomes %v over %d trials, want non-enforcing %d/%d", r.Outcomes, r.Trials, n, n)
	}
	if code != 1 {
		t.Errorf("run exited %d, want 1 (fail-open)\n%s", code, stderr)
	}
	// The gate, on the same report, blocks on the fail-open.
	gout, gerr, gcode := sandcheckExit(t, nil, "gate", filepath.Join(out, "report.json"))
	if gcode != 1 || !strings.Contains(gout+gerr, "non-enforcing") {
		t.Errorf("gate exited %d, want 1 naming non-enforcing:\n%s%s", gcode, gout, gerr)
	}
}

// TestKnownFindingHidesNothing: with the secret made readable (a fault in the real srt), the
// filesystem scenarios whose other checks are known findings must still fail, in `trial` and in
// `run`; the healthy srt passes `trial` with its known findings accepted.
func TestKnownFindingHidesNothing(t *testing.T) {
	requireSandbox(t)
	_, stderr, code := sandcheckExit(t, nil, "trial", "--label-filter", "filesystem && seed")
	if code != 0 {
		t.Fatalf("healthy srt: trial exited %d, want 0 (only known findings)\n%s", code, stderr)
	}
	stdout, stderr, code := sandcheckExit(t, nil, "trial", "--label-filter", "filesystem && seed", "--fault", "fs-drop-deny-read")
	if code == 0 || strings.Contains(stdout, "SUCCESS!") {
		t.Errorf("fs-drop-deny-read: trial exited %d, want non-zero\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = sandcheckExit(t, nil, "run", "-n", "2", "--plain", "--label-filter", "filesystem",
		"--fault", "fs-drop-deny-read", "--out", t.TempDir())
	if code != 1 {
		t.Errorf("fs-drop-deny-read: run exited %d, want 1\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "read") || !strings.Contains(stdout, "secret") {
		t.Errorf("run summary does not name the secret read:\n%s", stdout)
	}
}

// TestPreflightFilesystemFailOpen: srt 0.0.83 has a known fail-open filesystem finding, so
// preflight --filesystem exits non-zero; --accept-known accepts it by name.
func TestPreflightFilesystemFailOpen(t *testing.T) {
	requireSandbox(t)
	stdout, stderr, code := sandcheckExit(t, nil, "preflight", "--filesystem", "--timeout", "20s")
	if code == 0 {
		t.Errorf("preflight --filesystem exited 0 on a known fail-open finding:\n%s%s", stdout, stderr)
	}
	stdout, stderr, code = sandcheckExit(t, nil, "preflight", "--filesystem", "--accept-known", "--timeout", "20s")
	if code != 0 {
		t.Errorf("preflight --filesystem --accept-known exited %d, want 0:\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout+stderr, "git-hooks-new-repo") {
		t.Errorf("accepted findings not named:\n%s%s", stdout, stderr)
	}
}

// TestGateOnTimeouts: a journal of 80 correct trials and 10 timeouts fails the gate on the
// harness bound (timeouts leave too little evidence); the same with egress in one timeout fails
// as fail-open. Driven through `sandcheck report` and `sandcheck gate` as a release job would.
func TestGateOnTimeouts(t *testing.T) {
	write := func(egress bool) string {
		dir := t.TempDir()
		w, err := journal.OpenWriter(filepath.Join(dir, "journal.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		cell := model.Cell{ID: "srt/local", Target: "srt", Host: "local", Labels: "network"}
		start := time.Now()
		for i := 0; i < 90; i++ {
			r := model.Record{V: journal.SchemaVersion, RunID: "gate-e2e", Cell: cell, Trial: i, Start: start, DurationMS: 900,
				Outcome: model.Correct, Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}}}
			if i >= 80 {
				r.Outcome, r.TimedOut, r.Scenarios, r.Hint = model.Timeout, true, nil, "trial exceeded its deadline"
				if egress && i == 85 {
					r.Outcome, r.Hint = model.NonEnforcing, "denied host reached before the deadline"
					r.Egress = []string{"denied http GET /http/0123abcd from 198.18.0.2"}
				}
			}
			if err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "report")
		if so, se, code := sandcheckExit(t, nil, "report", filepath.Join(dir, "journal.jsonl"), "--out", out); code != 0 {
			t.Fatalf("report exited %d:\n%s%s", code, so, se)
		}
		return filepath.Join(out, "report.json")
	}
	policy := filepath.Join(t.TempDir(), "gate.yaml")
	if err := os.WriteFile(policy, []byte("min_trials: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	so, se, code := sandcheckExit(t, nil, "gate", write(false), "--policy", policy)
	if code != 1 || !strings.Contains(so+se, "timeout") || strings.Contains(so+se, "non-enforcing") {
		t.Errorf("80 correct + 10 timeouts: gate exited %d, want 1 on the harness bound:\n%s%s", code, so, se)
	}
	so, se, code = sandcheckExit(t, nil, "gate", write(true), "--policy", policy)
	if code != 1 || !strings.Contains(so+se, "198.18.0.2") {
		t.Errorf("a timeout with egress: gate exited %d, want 1 naming the egress:\n%s%s", code, so, se)
	}
}
