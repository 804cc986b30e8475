package workflowcheck

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

const workflows = "../../.github/workflows"

// TestRepoWorkflows: no workflow of ours can let a failing command pass its step.
func TestRepoWorkflows(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(workflows, "*.y*ml"))
	if len(files) < 3 {
		t.Fatalf("workflows: %v", files)
	}
	for _, f := range files {
		ps, err := CheckFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			t.Error(p)
		}
	}
}

func TestCheckCatchesHiddenFailures(t *testing.T) {
	wf := func(top, job, step string) string {
		return "on: push\n" + top + "jobs:\n  j:\n    runs-on: ubuntu-24.04\n" + job + "    steps:\n      - name: s\n" + step
	}
	const piped = "        run: ./bin/sandcheck gate r.json | tee gate.txt\n"
	cases := []struct {
		name, yaml string
		bad        bool
	}{
		{"pipe with GitHub's default shell", wf("", "", piped), true},
		{"pipe in a folded script", wf("", "", "        run: >-\n          ./bin/sandcheck compare a b\n          | tee c.txt\n"), true},
		{"pipe under sh", wf("", "", piped+"        shell: sh\n"), true},
		{"pipe under a custom bash without pipefail", wf("", "", piped+"        shell: bash -e {0}\n"), true},
		{"|& is a pipe too", wf("", "", "        run: make test |& tee log\n"), true},
		{"step shell bash", wf("", "", piped+"        shell: bash\n"), false},
		{"job defaults bash", wf("", "    defaults:\n      run:\n        shell: bash\n", piped), false},
		{"workflow defaults bash", wf("defaults:\n  run:\n    shell: bash\n", "", piped), false},
		{"the step's own shell wins over bash defaults", wf("defaults:\n  run:\n    shell: bash\n", "", piped+"        shell: sh\n"), true},
		{"set -o pipefail in the script", wf("", "", "        run: |\n          set -euo pipefail\n          a | tee b\n"), false},
		{"or is not a pipe", wf("", "", "        run: a || b\n"), false},
		{"quoted pipes are text", wf("", "", "        run: echo 'a | b' \"c | d\"\n"), false},
		{"expressions are not shell", wf("", "", "        run: echo ${{ github.ref || 'x' }}\n"), false},
		{"comments are not shell", wf("", "", "        run: |\n          a # then | b\n"), false},
		{"uses steps have no script", wf("", "", "        uses: actions/checkout@v4\n"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := Check("w.yml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if (len(ps) > 0) != c.bad {
				t.Fatalf("problems = %v, want bad=%v", ps, c.bad)
			}
			if c.bad && !strings.Contains(ps[0].String(), `job j, step "s": the script pipes into another command`) {
				t.Fatalf("message = %q", ps[0])
			}
		})
	}
}

// nightlySteps returns the merge job's steps of nightly.yml.
func nightlySteps(t *testing.T) map[string]Step {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(workflows, "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := Steps("nightly.yml", data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Step{}
	for _, s := range steps {
		if s.Job == "merge" {
			out[s.Name] = s
		}
	}
	return out
}

// sandcheck builds the real binary into dir/bin, where the workflow steps call it.
func sandcheck(t *testing.T, dir string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go toolchain: %v", err)
	}
	cmd := exec.Command(gobin, "build", "-o", filepath.Join(dir, "bin", "sandcheck"), "github.com/sandcheck/sandcheck/cmd/sandcheck")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// journalOf writes a journal of correct trials followed by n trials of outcome o (a timeout
// without egress, or a scenario failing with o) and turns it into dir/<out>/report.json with the
// real `sandcheck report`.
func journalOf(t *testing.T, dir, out string, correct int, o model.Outcome, n int) {
	t.Helper()
	os.Remove(filepath.Join(dir, out+".jsonl")) // the writer appends; each call is a new night
	w, err := journal.OpenWriter(filepath.Join(dir, out+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cell := model.Cell{ID: "srt|local", Target: "srt", Host: "local"}
	for i := 0; i < correct+n; i++ {
		r := model.Record{V: journal.SchemaVersion, RunID: "night", Cell: cell, Trial: i, Outcome: model.Correct,
			Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}}}
		switch {
		case i < correct:
		case o == model.Timeout:
			r = model.Record{V: journal.SchemaVersion, RunID: "night", Cell: cell, Trial: i, Outcome: o, TimedOut: true}
		default:
			r.Outcome, r.Scenarios[0].Outcome, r.Scenarios[0].Pass = o, o, false
		}
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, out))
	if code, log := run(t, dir, nil, "./bin/sandcheck", "report", out+".jsonl", "--out", out); code != 0 {
		t.Fatalf("sandcheck report: exit %d\n%s", code, log)
	}
}

// run runs argv in dir and returns its exit code and output.
func run(t *testing.T, dir string, env []string, argv ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("%v: %v\n%s", argv, err, out)
	return -1, ""
}

// runStep runs a step's script as GitHub would with its shell (which must be bash), with a
// fresh job summary, and returns the exit code, the log and the summary.
func runStep(t *testing.T, dir string, s Step) (int, string, string) {
	t.Helper()
	if s.Shell != "bash" {
		t.Fatalf("step %q runs under %q, not bash (-eo pipefail)", s.Name, s.Shell)
	}
	script := filepath.Join(dir, "step.sh")
	summary := filepath.Join(dir, "summary.md")
	os.Remove(summary)
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, dir, []string{"GITHUB_STEP_SUMMARY=" + summary}, append(append([]string{}, PipefailBash...), script)...)
	sum, _ := os.ReadFile(summary)
	return code, out, string(sum)
}

// TestNightlyStepsFailTheJob drives the nightly's own compare and gate steps, as GitHub runs
// them, against reports the real binary judges: a failing gate or compare fails the step, a
// passing one does not, and both land in the job summary. It also shows the hole the rule
// closes: the old `gate | tee` step passes a failing gate under GitHub's default shell.
func TestNightlyStepsFailTheJob(t *testing.T) {
	dir := t.TempDir()
	sandcheck(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "gate.yaml"), []byte("# defaults\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := nightlySteps(t)
	gate, compare := steps["gate"], steps["compare with the last passing night"]
	if gate.Run == "" || compare.Run == "" {
		t.Fatalf("nightly.yml merge job lacks its gate or compare step: %v", steps)
	}

	// 80 correct + 10 timeouts: the gate fails on the harness bound; compare (timeouts are not
	// measured, so no rate rose) passes.
	journalOf(t, dir, "baseline", 80, model.Correct, 0)
	journalOf(t, dir, "merged", 80, model.Timeout, 10)
	code, log, summary := runStep(t, dir, gate)
	if code != 1 || !strings.Contains(log, "harness-bound: srt@local: 10 of 90 trials") || !strings.Contains(summary, "FAIL: 1 blocker(s)") || !strings.Contains(summary, "### gate (exit 1)") {
		t.Fatalf("failing gate step: exit %d\nlog:\n%s\nsummary:\n%s", code, log, summary)
	}
	if code, log, _ := runStep(t, dir, compare); code != 0 {
		t.Fatalf("compare without a regression: exit %d\n%s", code, log)
	}
	// The old step, `gate | tee`, under GitHub's default `bash -e` passes the same failing gate.
	old := filepath.Join(dir, "old.sh")
	if err := os.WriteFile(old, []byte("./bin/sandcheck gate merged/report.json --policy gate.yaml | tee merged/gate.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run(t, dir, nil, "bash", "-e", old); code != 0 {
		t.Fatalf("bash -e: a piped failing gate exits %d (the hole this package guards against is gone?)\n%s", code, out)
	}
	if code, out := run(t, dir, nil, append(append([]string{}, PipefailBash...), old)...); code != 1 {
		t.Fatalf("bash -eo pipefail: a piped failing gate exits %d, want 1\n%s", code, out)
	}

	// A regression: 20 of 80 proxy-dead against a clean baseline fails the compare step.
	journalOf(t, dir, "merged", 60, model.ProxyDead, 20)
	code, log, summary = runStep(t, dir, compare)
	if code != 1 || !strings.Contains(summary, "### compare with the last passing night (exit 1)") {
		t.Fatalf("compare step on a regression: exit %d\nlog:\n%s\nsummary:\n%s", code, log, summary)
	}

	// A clean night passes both steps.
	journalOf(t, dir, "merged", 80, model.Correct, 0)
	if code, log, summary := runStep(t, dir, gate); code != 0 || !strings.Contains(summary, "PASS: 1 rows in 1 cells within policy") {
		t.Fatalf("passing gate step: exit %d\nlog:\n%s\nsummary:\n%s", code, log, summary)
	}
	if code, log, _ := runStep(t, dir, compare); code != 0 {
		t.Fatalf("compare, clean night: exit %d\n%s", code, log)
	}
}

// TestNightlyBaselineOnlyOnPassingNight: the steps that move the baseline run only when every
// shard, the report, compare and gate succeeded, and only after the gate.
func TestNightlyBaselineOnlyOnPassingNight(t *testing.T) {
	steps := nightlySteps(t)
	gate := steps["gate"]
	var moves int
	for _, s := range steps {
		writes := strings.Contains(s.Run, "cp ") && strings.Contains(s.Run, "baseline/")
		if !writes && !(strings.HasPrefix(s.Uses, "actions/cache/save") && strings.Contains(s.With["path"], "baseline")) {
			continue
		}
		moves++
		if !strings.Contains(s.If, "success()") || !strings.Contains(s.If, "needs.shard.result == 'success'") || s.Line < gate.Line {
			t.Errorf("nightly.yml:%d: step %q moves the baseline with if: %q (want success() && needs.shard.result == 'success', after the gate)", s.Line, s.Name, s.If)
		}
	}
	if moves != 2 {
		t.Fatalf("found %d baseline-moving steps, want 2 (copy and cache save)", moves)
	}
	if strings.Contains(gate.If, "always()") || gate.If == "" {
		// The gate must run after a failed compare (!cancelled()), but only on a real report.
		t.Errorf("gate if: %q", gate.If)
	}
}
