//go:build linux

package process

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
)

// The test binary doubles as a fake trial process and as a runner process to kill -9.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == SpareArg {
		os.Exit(spareTrialMain())
	}
	if len(os.Args) == 3 && os.Args[1] == "trial" { // a trial that found no spare
		key, err := ReadKey(bufio.NewReader(os.Stdin))
		fmt.Printf("fresh pid=%d arg=trial,%s key=%s\n", os.Getpid(), os.Args[2], key)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	switch {
	case os.Getenv("SANDCHECK_FAKE_TRIAL") != "":
		os.Exit(fakeTrialMain())
	case os.Getenv("SANDCHECK_TEST_RUNNER") != "":
		os.Exit(testRunnerMain())
	}
	os.Exit(m.Run())
}

// fakeTrialMain is a trial process: it spins or sleeps as told and prints an outcome drawn from
// a seeded probability of proxy-dead.
func fakeTrialMain() int {
	if ms, _ := strconv.Atoi(os.Getenv("FAKE_SPIN_MS")); ms > 0 {
		end := time.Now().Add(time.Duration(ms) * time.Millisecond)
		x := 0
		for time.Now().Before(end) {
			for i := range 10000 {
				x += i * i
			}
		}
		_ = x
	}
	if ms, _ := strconv.Atoi(os.Getenv("FAKE_SLEEP_MS")); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond) // the fake trial's work (not a wait)
	}
	p, _ := strconv.ParseFloat(os.Getenv("FAKE_P"), 64)
	seed, _ := strconv.ParseUint(os.Getenv("FAKE_SEED"), 10, 64)
	idx, _ := strconv.Atoi(os.Getenv("FAKE_INDEX"))
	if runtest.Uniform(seed, os.Getenv("FAKE_CELL"), idx) < p {
		fmt.Println(model.ProxyDead)
	} else {
		fmt.Println(model.Correct)
	}
	return 0
}

// fakeProcess is an Executor whose trials re-execute this test binary as fakeTrialMain.
func fakeProcess(env ...string) *Executor {
	return &Executor{
		Command: func(t runner.Trial, scratch string) ([]string, []string, string) {
			e := append(os.Environ(), "SANDCHECK_FAKE_TRIAL=1", "FAKE_CELL="+t.Cell.ID, "FAKE_INDEX="+strconv.Itoa(t.Index))
			return []string{os.Args[0]}, append(e, env...), scratch
		},
		Parse: func(t runner.Trial, res runner.ProcResult) (model.Record, error) {
			o := model.Outcome(strings.TrimSpace(string(res.Stdout)))
			if !o.Valid() {
				return model.Record{}, fmt.Errorf("no outcome in %q", res.Stdout)
			}
			return model.Record{Outcome: o}, nil
		},
	}
}

// shell is an Executor running script with sh; TRIAL and OUT are set in its environment.
func shell(script, out string) *Executor {
	return &Executor{
		KillGrace: 300 * time.Millisecond,
		Command: func(t runner.Trial, scratch string) ([]string, []string, string) {
			env := append(os.Environ(), "TRIAL="+strconv.Itoa(t.Index), "OUT="+out)
			return []string{"sh", "-c", script}, env, scratch
		},
	}
}

// testRunnerMain is a runner process for the kill -9 test, whose trials leave a sleep running.
func testRunnerMain() int {
	dir := os.Getenv("SANDCHECK_TEST_RUNNER")
	n, _ := strconv.Atoi(os.Getenv("RUNNER_N"))
	exec := shell(`sleep 1000 & echo $! >> "$OUT/sleeps"; wait`, dir)
	_, err := runner.Run(context.Background(), exec, runner.Options{
		Cells: runtest.Cells(2), Trials: n, Parallel: 2, Dir: filepath.Join(dir, "run"), Resume: true, Timeout: time.Hour,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// gone reports whether pid no longer runs (absent, or a zombie nobody reaped yet).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, _ := os.ReadFile(path)
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q", path, f)
		}
		pids = append(pids, p)
	}
	return pids
}
