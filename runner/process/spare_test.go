//go:build linux

package process

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
)

// spareTrialMain is a spare: it waits for its trial on stdin, then reports how it ran: its pid,
// the trial's argument and the key it read after the request, as a trial does.
func spareTrialMain() int {
	stdin := bufio.NewReader(os.Stdin)
	line, err := stdin.ReadString('\n')
	if err != nil {
		return 0
	}
	var req SpareRequest
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		return 2
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	key, err := ReadKey(stdin)
	fmt.Printf("spare pid=%d arg=%s key=%s\n", os.Getpid(), strings.Join(req.Args, ","), key)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// Trials run on processes started ahead of them, each its own process, each with its own key;
// Close leaves no spare behind.
func TestSparesServeTrials(t *testing.T) {
	var pids []int
	spares := 0
	var pe *Executor
	pe = &Executor{
		Spare: []string{os.Args[0], SpareArg},
		Command: func(tr runner.Trial, _ string) ([]string, []string, string) {
			// Every trial but the first waits until the spare started for it is up.
			if tr.Index > 0 {
				waitSpare(pe)
			}
			return []string{os.Args[0], "trial", strconv.Itoa(tr.Index)}, nil, ""
		},
		Parse: func(t runner.Trial, res runner.ProcResult) (model.Record, error) {
			var pid int
			var how, arg, key string
			if _, err := fmt.Sscanf(strings.TrimSpace(string(res.Stdout)), "%s pid=%d arg=%s key=%s", &how, &pid, &arg, &key); err != nil {
				return model.Record{Outcome: model.HarnessError, Error: fmt.Sprintf("no trial report: %q", res.Stdout)}, nil
			}
			if how == "spare" {
				spares++
			}
			if arg != "trial,"+strconv.Itoa(t.Index) || key != t.Key {
				return model.Record{Outcome: model.HarnessError, Error: fmt.Sprintf("spare ran %q with key %q", arg, key)}, nil
			}
			pids = append(pids, pid)
			return model.Record{Outcome: model.Correct}, nil
		},
	}
	sum, err := runner.Run(context.Background(), pe, runner.Options{Cells: runtest.Cells(1), Trials: 6, Dir: t.TempDir()})
	if err != nil || sum.Cells[0].Counts[model.Correct] != 6 {
		t.Fatalf("ran %+v: %v", sum.Cells[0].Counts, err)
	}
	// The first trial finds no spare and starts its own process; each later one finds the
	// spare started with the trial before it.
	if spares != 5 {
		t.Fatalf("%d of 6 trials ran on a spare, want 5", spares)
	}
	seen := map[int]bool{}
	for _, p := range pids {
		if seen[p] {
			t.Fatalf("process %d ran two trials", p)
		}
		seen[p] = true
	}
	// The last trial started one more, for a trial that never comes.
	waiting := waitSpare(pe)
	if len(waiting) == 0 {
		t.Fatal("no spare waiting for a next trial")
	}
	pe.Close()
	for _, p := range waiting {
		// Close collected it (Wait): its pid is gone.
		if syscall.Kill(p.cmd.Process.Pid, 0) == nil {
			t.Fatalf("spare %d still running after Close", p.cmd.Process.Pid)
		}
	}
}

// waitSpare waits (10 s at most) until a spare is up, and returns the spares waiting. A spare is
// started in the background, so the trial that started it may be done before it is up.
func waitSpare(pe *Executor) []*proc {
	var waiting []*proc
	testwait.Eventually(10*time.Second, func() bool {
		pe.spareMu.Lock()
		defer pe.spareMu.Unlock()
		waiting = append([]*proc(nil), pe.spares...)
		return len(waiting) > 0
	})
	return waiting
}
