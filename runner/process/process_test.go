//go:build linux

package process

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
	"github.com/sandcheck/sandcheck/runner/rundir"
)

func TestTimeoutKillsWholeProcessGroup(t *testing.T) {
	cases := map[string]string{
		"term":        `echo $$ > "$OUT/child"; sleep 1000 & echo $! > "$OUT/grandchild"; wait`,
		"ignore-term": `trap "" TERM; echo $$ > "$OUT/child"; sleep 1000 & echo $! > "$OUT/grandchild"; wait`,
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			pe := shell(script, out)
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			rec := pe.Run(ctx, runner.Trial{Cell: runtest.Cells(1)[0], Timeout: 300 * time.Millisecond})
			if rec.Outcome != model.Timeout || !strings.Contains(rec.Error, "deadline 300ms exceeded; process group killed") {
				t.Fatalf("record %+v", rec)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
			for _, f := range []string{"child", "grandchild"} {
				pids := readPids(t, filepath.Join(out, f))
				if len(pids) != 1 {
					t.Fatalf("%s pids %v", f, pids)
				}
				testwait.Gone(t, 2*time.Second, pids[0])
			}
		})
	}
}

func TestStragglersKilledAfterNormalExit(t *testing.T) {
	out := t.TempDir()
	// The background sleep keeps stdout open: without the group kill this trial would hang.
	pe := shell(`sleep 1000 & echo $! > "$OUT/grandchild"; echo done`, out)
	start := time.Now()
	rec := pe.Run(context.Background(), runner.Trial{Timeout: time.Minute})
	if rec.Outcome != model.Correct {
		t.Fatalf("record %+v", rec)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s", d)
	}
	testwait.Gone(t, 2*time.Second, readPids(t, filepath.Join(out, "grandchild"))[0])
}

func TestExecutorHandsOutputToParse(t *testing.T) {
	var seen runner.ProcResult
	var scratchExisted bool
	pe := &Executor{
		MaxOutput: 1000,
		Command: func(tr runner.Trial, scratch string) ([]string, []string, string) {
			return []string{"sh", "-c", `echo report > report.json; head -c 5000 /dev/zero | tr '\0' x; echo oops >&2; exit 3`}, nil, scratch
		},
		Parse: func(tr runner.Trial, res runner.ProcResult) (model.Record, error) {
			seen = res
			data, err := os.ReadFile(filepath.Join(res.Scratch, "report.json"))
			scratchExisted = err == nil && string(data) == "report\n"
			return model.Record{Outcome: model.ProxyDead, Hint: "from parse"}, nil
		},
	}
	rec := pe.Run(context.Background(), runner.Trial{Timeout: time.Minute})
	if rec.Outcome != model.ProxyDead || rec.Hint != "from parse" {
		t.Fatalf("record %+v", rec)
	}
	if seen.ExitCode != 3 || string(seen.Stderr) != "oops\n" || len(seen.Stdout) != 1000 || !seen.Truncated || seen.TimedOut {
		t.Fatalf("result exit=%d stderr=%q stdout=%d truncated=%v", seen.ExitCode, seen.Stderr, len(seen.Stdout), seen.Truncated)
	}
	if !scratchExisted {
		t.Fatal("scratch dir not usable by the trial and Parse")
	}
	if _, err := os.Stat(seen.Scratch); !os.IsNotExist(err) {
		t.Fatalf("scratch %s not removed", seen.Scratch)
	}
}

func TestExecutorFailuresAreHarnessErrors(t *testing.T) {
	pe := &Executor{Command: func(runner.Trial, string) ([]string, []string, string) {
		return []string{"/nonexistent/sandcheck-trial"}, nil, ""
	}}
	if rec := pe.Run(context.Background(), runner.Trial{}); rec.Outcome != model.HarnessError || !strings.Contains(rec.Error, "start /nonexistent/sandcheck-trial") {
		t.Fatalf("record %+v", rec)
	}
	pe = shell("echo boom >&2; exit 2", t.TempDir())
	if rec := pe.Run(context.Background(), runner.Trial{}); rec.Outcome != model.HarnessError || rec.Error != "exit 2: boom" {
		t.Fatalf("record %+v", rec)
	}
	pe.Parse = func(runner.Trial, runner.ProcResult) (model.Record, error) {
		return model.Record{}, errors.New("no report")
	}
	if rec := pe.Run(context.Background(), runner.Trial{}); rec.Outcome != model.HarnessError || !strings.HasPrefix(rec.Error, "parse trial output: no report (exit 2, stderr: boom)") {
		t.Fatalf("record %+v", rec)
	}
}

func TestProcessFakeFollowsSeed(t *testing.T) {
	dir := t.TempDir()
	// A scratch dir left by a killed run is cleared at start.
	os.MkdirAll(filepath.Join(dir, runner.ScratchDir, "trial-123"), 0o755)
	pe := fakeProcess("FAKE_P=0.5", "FAKE_SEED=3")
	if _, err := runner.Run(context.Background(), pe, runner.Options{Cells: runtest.Cells(2), Trials: 5, Parallel: 2, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	got, _ := runtest.JournalKeys(t, filepath.Join(dir, runner.JournalFile))
	p := map[model.Outcome]float64{model.ProxyDead: 0.5}
	for k, r := range got {
		if want := runtest.Draw(3, p, k.Cell, k.Trial); r.Outcome != want {
			t.Fatalf("%v: process says %s, in-process fake %s", k, r.Outcome, want)
		}
	}
	if len(got) != 10 {
		t.Fatalf("%d journaled", len(got))
	}
	if _, err := os.Stat(filepath.Join(dir, runner.ScratchDir)); !os.IsNotExist(err) {
		t.Fatalf("scratch dir left behind: %v", err)
	}
}

// TestLeftoversOfKilledRunAreKilled: trials of a runner killed with -9 keep running in their
// own groups; the next start must kill them.
func TestLeftoversOfKilledRunAreKilled(t *testing.T) {
	skip.Short(t, "spawns a runner process")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SANDCHECK_TEST_RUNNER="+dir, "RUNNER_N=5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgids := filepath.Join(dir, "run", rundir.PgidFile)
	testwait.Until(t, "two trials running", 20*time.Second, func() bool {
		data, _ := os.ReadFile(pgids)
		return len(readPids(t, filepath.Join(dir, "sleeps"))) == 2 && strings.Count(string(data), "\n+") == 2
	})
	cmd.Process.Kill()
	cmd.Wait()
	sleeps := readPids(t, filepath.Join(dir, "sleeps"))
	// The trials' leaders die with the runner (Pdeathsig); wait for that, then their children
	// must still run, in their own groups, for the next start to find.
	leaders, _ := os.ReadFile(pgids)
	for _, l := range strings.Split(string(leaders), "\n") {
		if pgid, _, ok := strings.Cut(strings.TrimPrefix(l, "+"), " "); ok && strings.HasPrefix(l, "+") {
			p, _ := strconv.Atoi(pgid)
			testwait.Gone(t, 5*time.Second, p)
		}
	}
	for _, p := range sleeps {
		if gone(p) {
			t.Fatalf("sleep %d died with the runner; nothing left to test", p)
		}
	}
	exec := runner.ExecutorFunc(func(ctx context.Context, tr runner.Trial) model.Record { return model.Record{Outcome: model.Correct} })
	sum, err := runner.Run(context.Background(), exec, runner.Options{Cells: runtest.Cells(2), Trials: 5, Dir: filepath.Join(dir, "run"), Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Leftovers != 2 {
		t.Fatalf("killed %d leftover groups, want 2", sum.Leftovers)
	}
	for _, p := range sleeps {
		testwait.Gone(t, 2*time.Second, p)
	}
}

func TestCtrlCStopsKillsAndKeepsJournalConsistent(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	pe := shell(`if [ "$TRIAL" -lt 3 ]; then exit 0; fi; echo $$ >> "$OUT/pids"; exec sleep 1000`, out)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := runner.Run(ctx, pe, runner.Options{Cells: runtest.Cells(1), Trials: 10, Parallel: 2, Dir: dir, Timeout: time.Hour})
		errc <- err
	}()
	testwait.Until(t, "two sleeping trials", 10*time.Second, func() bool { return len(readPids(t, filepath.Join(out, "pids"))) == 2 })
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted after 3 trial(s)") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	for _, p := range readPids(t, filepath.Join(out, "pids")) {
		testwait.Gone(t, 2*time.Second, p)
	}
	got, warn := runtest.JournalKeys(t, filepath.Join(dir, runner.JournalFile))
	if len(got) != 3 || len(warn) != 0 {
		t.Fatalf("journal holds %d trials (%v), want the 3 finished ones", len(got), warn)
	}
	// Resume finishes the rest, each once.
	sum, err := runner.Run(context.Background(), shell("exit 0", out), runner.Options{Cells: runtest.Cells(1), Trials: 10, Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runtest.JournalKeys(t, filepath.Join(dir, runner.JournalFile)); len(got) != 10 || sum.Ran != 7 {
		t.Fatalf("after resume %d trials, ran %d", len(got), sum.Ran)
	}
}
