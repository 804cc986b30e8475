// Package actioncheck tests the repository's GitHub Action (action.yml at the root): its shape,
// which actionlint does not check (actionlint lints workflows; it reads action.yml only where a
// workflow uses it, for the inputs and outputs the caller names), and its script,
// scripts/action/run.sh, run here as GitHub runs it against the real srt.
package actioncheck

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/targets/srt"
)

const (
	repoRoot   = "../.."
	actionFile = repoRoot + "/action.yml"
	scriptFile = repoRoot + "/scripts/action/run.sh"
	quickGate  = repoRoot + "/testdata/action/quick-gate.yaml"
)

type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Uses  string            `yaml:"uses"`
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var (
	inputRef  = regexp.MustCompile(`\$\{\{[^}]*\binputs\.([A-Za-z0-9_-]+)`)
	pinned    = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$`)
	scriptRef = regexp.MustCompile(`\$\{?GITHUB_ACTION_PATH\}?/([^"'\s]+)`)
	envInput  = regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`)
	stepOut   = regexp.MustCompile(`^\$\{\{ steps\.([A-Za-z0-9_-]+)\.outputs\.([a-z0-9-]+) \}\}$`)
	readsIn   = regexp.MustCompile(`\bINPUT_[A-Z0-9_]+`)
	writesOut = regexp.MustCompile(`(?m)^\s*output ([a-z0-9-]+) `)
)

// checkAction returns what is wrong with a composite action's metadata: an input used but not
// declared or declared but not used, a `uses:` not pinned to a version tag or commit, a run step
// without `shell: bash` or with ${{ }} spliced into its script, a script missing from the
// repository, inputs the step passes that the script does not read (or the reverse), outputs
// that no step writes. script reads a repository file (relative to the root).
func checkAction(data []byte, script func(string) ([]byte, error)) []string {
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		return []string{fmt.Sprintf("parse: %v", err)}
	}
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if a.Runs.Using != "composite" {
		badf("runs.using %q, want composite", a.Runs.Using)
	}
	used := map[string]bool{}
	for _, m := range inputRef.FindAllStringSubmatch(string(data), -1) {
		used[m[1]] = true
		if _, ok := a.Inputs[m[1]]; !ok {
			badf("inputs.%s is used but not declared", m[1])
		}
	}
	for name, in := range a.Inputs {
		if !used[name] {
			badf("input %s is declared but nothing uses it", name)
		}
		if in.Description == "" {
			badf("input %s has no description", name)
		}
	}
	written := map[string]map[string]bool{} // step id -> outputs its script writes
	for i, s := range a.Runs.Steps {
		switch {
		case s.Uses != "" && !pinned.MatchString(s.Uses):
			badf("step %d: uses %q: pin a major version tag (@v5) or a commit; a branch moves under the caller, ./ is the caller's repository", i, s.Uses)
		case s.Uses != "":
		case s.Shell != "bash":
			badf("step %d: shell %q: a composite run step needs one, and bash is -eo pipefail", i, s.Shell)
		case strings.Contains(s.Run, "${{"):
			badf("step %d: ${{ }} in the script: pass inputs as env, never as script text", i)
		default:
			m := scriptRef.FindStringSubmatch(s.Run)
			if m == nil {
				badf("step %d: the script does not run a file of the action ($GITHUB_ACTION_PATH/...): keep the logic where it can be tested", i)
				continue
			}
			body, err := script(m[1])
			if err != nil {
				badf("step %d: script %s: %v", i, m[1], err)
				continue
			}
			reads := map[string]bool{}
			for _, name := range readsIn.FindAllString(string(body), -1) {
				reads[name] = true
				if _, ok := s.Env[name]; !ok {
					badf("step %d: %s reads %s, which the step does not pass", i, m[1], name)
				}
			}
			for name, v := range s.Env {
				if !strings.HasPrefix(name, "INPUT_") {
					continue
				}
				if !reads[name] {
					badf("step %d: passes %s, which %s does not read", i, name, m[1])
				}
				if im := envInput.FindStringSubmatch(v); im == nil || strings.ToUpper(strings.ReplaceAll(im[1], "-", "_")) != strings.TrimPrefix(name, "INPUT_") {
					badf("step %d: %s is %q, want ${{ inputs.%s }}", i, name, v, strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "INPUT_")), "_", "-"))
				}
			}
			if s.ID != "" {
				written[s.ID] = map[string]bool{}
				for _, w := range writesOut.FindAllStringSubmatch(string(body), -1) {
					written[s.ID][w[1]] = true
				}
			}
		}
	}
	for name, o := range a.Outputs {
		m := stepOut.FindStringSubmatch(o.Value)
		if m == nil {
			badf("output %s: value %q is not a step's output", name, o.Value)
			continue
		}
		if outs, ok := written[m[1]]; !ok || !outs[m[2]] {
			badf("output %s: step %s does not write %s", name, m[1], m[2])
		}
	}
	slices.Sort(bad)
	return bad
}

func readRepo(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(repoRoot, rel)) }

// TestActionShape holds action.yml to what the brief and GitHub need: the inputs and defaults
// callers rely on, every expression and script wired to something real.
func TestActionShape(t *testing.T) {
	data, err := os.ReadFile(actionFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkAction(data, readRepo) {
		t.Error(p)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"target": "srt", "version": "", "matrix": "", "policy": "", "trials": "73"} {
		if in, ok := a.Inputs[name]; !ok || in.Default == nil || *in.Default != want {
			t.Errorf("input %s: want default %q", name, want)
		}
	}
	for _, name := range []string{"exit-code", "verdict", "report"} {
		if _, ok := a.Outputs[name]; !ok {
			t.Errorf("output %s missing", name)
		}
	}
	var uses []string
	for _, s := range a.Runs.Steps {
		uses = append(uses, s.Uses)
	}
	for _, want := range []string{"actions/setup-go@v5", "actions/upload-artifact@v4"} {
		if !slices.Contains(uses, want) {
			t.Errorf("steps use %v, want %s", uses, want)
		}
	}
}

// TestCheckActionCatches: each rule of checkAction fires on the mistake it is for.
func TestCheckActionCatches(t *testing.T) {
	good, err := os.ReadFile(actionFile)
	if err != nil {
		t.Fatal(err)
	}
	if bad := checkAction(good, readRepo); len(bad) != 0 {
		t.Fatalf("action.yml: %v", bad)
	}
	replace := func(old, new string) []byte {
		if !strings.Contains(string(good), old) {
			t.Fatalf("action.yml has no %q to mutate", old)
		}
		return []byte(strings.Replace(string(good), old, new, 1))
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"unpinned uses", replace("actions/upload-artifact@v4", "actions/upload-artifact@main"), `uses "actions/upload-artifact@main": pin`},
		{"an undeclared input", replace("${{ inputs.fault }}", "${{ inputs.faults }}"), "inputs.faults is used but not declared"},
		{"a dead input", replace("INPUT_FAULT: ${{ inputs.fault }}", "INPUT_FAULT: ${{ inputs.target }}"), "input fault is declared but nothing uses it"},
		{"an input spliced into the script", replace(`run: bash "$GITHUB_ACTION_PATH/scripts/action/run.sh"`, `run: bash "$GITHUB_ACTION_PATH/scripts/action/run.sh" ${{ inputs.target }}`), "${{ }} in the script"},
		{"a missing script", replace("$GITHUB_ACTION_PATH/scripts/action/run.sh", "$GITHUB_ACTION_PATH/scripts/action/gone.sh"), "script scripts/action/gone.sh"},
		{"no shell", replace("      shell: bash\n", ""), `shell "": a composite run step needs one`},
		{"an input the script does not read", replace("        INPUT_FAULT:", "        INPUT_FAULTS:"), "passes INPUT_FAULTS, which scripts/action/run.sh does not read"},
		{"an output nobody writes", replace("steps.sandcheck.outputs.verdict", "steps.sandcheck.outputs.verdicts"), "output verdict: step sandcheck does not write verdicts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := checkAction(c.data, readRepo)
			if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Fatalf("problems %v, want one saying %q", bad, c.want)
			}
		})
	}
}

// result is one run of the action's script.
type result struct {
	code    int
	outputs map[string]string
	summary string
	log     string
}

// runAction runs scripts/action/run.sh as the action's step does (bash -eo pipefail, the caller's
// workspace as working directory), with fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files and
// RUNNER_TEMP, and the given INPUT_* and other variables.
func runAction(t *testing.T, workspace string, env ...string) result {
	t.Helper()
	gh := t.TempDir()
	outFile, sumFile := filepath.Join(gh, "output"), filepath.Join(gh, "summary.md")
	for _, f := range []string{outFile, sumFile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = workspace
	for _, kv := range os.Environ() {
		// The caller's, not this test's: no stray inputs, and no GitHub files of a real job.
		if !strings.HasPrefix(kv, "INPUT_") && !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "RUNNER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+sumFile, "RUNNER_TEMP="+t.TempDir(),
		"PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	r := result{log: string(out), outputs: map[string]string{}}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	f, err := os.Open(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not name=value", sc.Text())
		}
		if _, dup := r.outputs[k]; dup {
			t.Fatalf("output %s written twice", k)
		}
		r.outputs[k] = v
	}
	sum, _ := os.ReadFile(sumFile)
	r.summary = string(sum)
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\noutputs %v\nsummary:\n%s\nlog (end):\n%s", r.code, r.outputs, r.summary, tail(r.log, 3000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestActionNothingToJudge: whatever stops the action before a verdict (an input it cannot use,
// a run that wrote no report) exits 2 with an ERROR verdict, never 0. No sandbox runs.
func TestActionNothingToJudge(t *testing.T) {
	ws := t.TempDir()
	r := runAction(t, ws, "INPUT_POLICY=missing.yaml")
	if r.code != 2 || !strings.HasPrefix(r.outputs["verdict"], "ERROR: policy "+ws+"/missing.yaml: no such file") ||
		r.outputs["exit-code"] != "2" || r.outputs["report"] != "" || !strings.Contains(r.summary, "## sandcheck: ERROR: policy") {
		t.Fatalf("missing policy: %v", r)
	}
	if r := runAction(t, ws, "INPUT_TRIALS=many"); r.code != 2 || !strings.Contains(r.outputs["verdict"], "trials: want a positive whole number") {
		t.Fatalf("trials=many: %v", r)
	}
	// The run itself refuses (an unknown fault): no report, so no verdict; it builds sandcheck.
	r = runAction(t, ws, "INPUT_FAULT=no-such-fault")
	if r.code != 2 || r.outputs["verdict"] != "ERROR: sandcheck run exited 2 with no report" || r.outputs["run-exit-code"] != "2" ||
		r.outputs["report"] != "" || !strings.Contains(r.summary, "### the run's last lines") || !strings.Contains(r.summary, "no-such-fault") {
		t.Fatalf("unknown fault: %v", r)
	}
	if _, err := os.Stat(filepath.Join(r.outputs["dir"], "run.log")); err != nil {
		t.Fatalf("the run directory keeps the run's log for the artifact: %v", err)
	}
}

// TestActionRealSrt runs the action's script against the real srt, as a caller's workflow would:
// the healthy sandbox (a version installed through sandcheck's npm cache, the --target
// NAME@VERSION path) passes its gate; the same srt behind an open proxy (a fail-open) fails it.
// Both leave the outputs, the job summary and the run directory. Run it under the shared lock:
// flock /tmp/sandcheck-real.lock go test ./internal/actioncheck
func TestActionRealSrt(t *testing.T) {
	skip.Short(t, "two sandcheck runs of the real srt (network scenarios, 4 trials each)")
	skip.UnlessRoot(t, "sandcheck's fixture hosts need network namespaces")
	srtPath, err := srt.Locate("")
	if err != nil {
		skip.Missing(t, "srt: %v (make deps)", err)
	}
	skip.UnlessTools(t, "make deps", "npm", "bwrap", "socat")
	ws := t.TempDir()
	gate, err := os.ReadFile(quickGate)
	if err != nil {
		t.Fatal(err)
	}
	// The caller's paths are relative to its workspace.
	if err := os.MkdirAll(filepath.Join(ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "ci", "gate.yaml"), gate, 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"INPUT_LABEL_FILTER=network", "INPUT_TRIALS=4", "INPUT_POLICY=ci/gate.yaml", config.SRT + "=" + srtPath}

	t.Run("healthy", func(t *testing.T) {
		// pinned: the version of the srt this machine has, installed again into the npm cache.
		r := runAction(t, ws, append(common, "INPUT_VERSION=pinned")...)
		dir := r.outputs["dir"]
		if r.code != 0 || r.outputs["exit-code"] != "0" || r.outputs["run-exit-code"] != "0" ||
			!strings.HasPrefix(r.outputs["verdict"], "PASS: ") || r.outputs["report"] != filepath.Join(dir, "report.json") {
			t.Fatalf("healthy srt: %v", r)
		}
		if !strings.Contains(r.log, "--target srt@pinned") {
			t.Fatalf("the run did not name a version (the npm cache's install path):\n%s", tail(r.log, 3000))
		}
		checkRunDir(t, r)
		if !strings.Contains(r.summary, "## sandcheck: PASS: ") || !strings.Contains(r.summary, "### gate (exit 0)") {
			t.Fatalf("summary:\n%s", r.summary)
		}
	})

	t.Run("fail-open", func(t *testing.T) {
		// No version: the srt on this machine ($SANDCHECK_SRT), behind an open proxy.
		r := runAction(t, ws, append(common, "INPUT_FAULT=open-proxy")...)
		if r.code != 1 || r.outputs["exit-code"] != "1" || r.outputs["run-exit-code"] != "1" ||
			!regexp.MustCompile(`^FAIL: \d+ blocker\(s\) \([1-9]\d* fail-open\)`).MatchString(r.outputs["verdict"]) {
			t.Fatalf("srt behind an open proxy: %v", r)
		}
		checkRunDir(t, r)
		if !strings.Contains(r.summary, "## sandcheck: FAIL: ") || !strings.Contains(r.summary, "### gate (exit 1)") ||
			!strings.Contains(r.summary, "fail-open") {
			t.Fatalf("summary:\n%s", r.summary)
		}
	})
}

// checkRunDir: the run directory (the artifact) has what `sandcheck run` writes plus the gate's
// output, the log and doctor, and the summary carries report.md.
func checkRunDir(t *testing.T, r result) {
	t.Helper()
	dir := r.outputs["dir"]
	for _, f := range []string{"journal.jsonl", "report.json", "report.md", "report.html", "junit.xml", "gate.txt", "run.log", "doctor.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(md) == 0 || !strings.Contains(r.summary, string(md)) {
		t.Errorf("the summary lacks report.md (%d bytes):\n%s", len(md), tail(r.summary, 2000))
	}
}
