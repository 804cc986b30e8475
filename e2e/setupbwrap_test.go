package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/model"
)

// TestSetupAcrossBubblewraps runs matrix/examples/setup-bubblewraps.yaml: the setup class with
// srt 0.0.64 and 0.0.65 on the four container images. 0.0.64 mounts on the planted links as it
// finds them, so each image's bubblewrap decides: 0.4.1 (bullseye) and 0.8.0 (bookworm) follow
// them out through /oldroot in every trial; 0.12.0 (trixie) and 0.13.1 (sid) refuse to mount on
// a symlink, and the next session does not start, saying so. 0.0.65 resolves the links itself
// and passes on all four, its next session started.
func TestSetupAcrossBubblewraps(t *testing.T) {
	requireDockerEngine(t)
	bin := hosttest.StaticSandcheck(t)
	const n = 2
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--matrix", "../matrix/examples/setup-bubblewraps.yaml", "-n", strconv.Itoa(n),
		"--json", "--plain", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "SANDCHECK_NPM_OFFLINE=1")
	// Exit 1: the open release fails open on the two old bubblewraps.
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("sandcheck run: %v (want exit 1)\n%s\n%s", err, stdout.String(), stderr.String())
	}
	type want struct {
		outcome model.Outcome
		next    string // in every trial's account of the next session
	}
	refused := want{model.Correct, "did not start (exit 1): bwrap: Can't mount on symlink destination"}
	started := want{model.Correct, "the next session started"}
	wants := map[string]want{
		"0.0.64 bullseye": {model.NonEnforcing, "the next session started"}, "0.0.64 bookworm": {model.NonEnforcing, "the next session started"},
		"0.0.64 trixie": refused, "0.0.64 sid": refused,
		"0.0.65 bullseye": started, "0.0.65 bookworm": started, "0.0.65 trixie": started, "0.0.65 sid": started,
	}
	f, err := os.Open(filepath.Join(out, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen, told := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Cell struct {
				Version, Host string
			} `json:"cell"`
			Outcome  model.Outcome `json:"outcome"`
			Evidence struct {
				Next string `json:"next_session"`
			} `json:"evidence"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Cell.Host == "" {
			continue
		}
		key := rec.Cell.Version + " " + rec.Cell.Host
		w, ok := wants[key]
		if !ok {
			t.Errorf("unexpected cell %s", key)
			continue
		}
		seen[key]++
		if rec.Outcome != w.outcome {
			t.Errorf("srt %s: %s, want %s", key, rec.Outcome, w.outcome)
		}
		// The journal keeps the evidence of a cell's first trial and of failures.
		if rec.Evidence.Next != "" {
			told[key]++
			if !strings.Contains(rec.Evidence.Next, w.next) {
				t.Errorf("srt %s: next session %q, want %q", key, rec.Evidence.Next, w.next)
			}
		}
	}
	for key := range wants {
		if seen[key] != n || told[key] == 0 {
			t.Errorf("srt %s: %d trials in the journal (want %d), %d with evidence", key, seen[key], n, told[key])
		}
	}
}
