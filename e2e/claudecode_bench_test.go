package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// BenchmarkClaudeCodeTrialVsBareClaude: what a sandcheck network trial of Claude Code costs next
// to the bare thing it measures: `claude -p` as the unprivileged user, its Bash tool running two
// curls (the allowed and the denied fixture host, by IP) in its sandbox, the scripted model
// answering (one per run, as in a trial), in a loop at -j1. Goal: a trial under 2 s wall on this
// machine. Reports the median of 3 rounds (SANDCHECK_BENCH_N runs each, default 10).
//
//	go test ./e2e -run '^$' -bench ClaudeCodeTrialVsBareClaude -benchtime 1x
func BenchmarkClaudeCodeTrialVsBareClaude(b *testing.B) {
	skip.UnlessRoot(b, "fixture namespaces")
	tg, err := claudecode.New("", "")
	if err != nil {
		b.Fatal(err)
	}
	acct, err := users.Resolve(model.UserUnprivileged)
	if err != nil {
		b.Fatal(err)
	}
	sweepAfter(b, acct)
	n := benchN(10)
	// Not b.TempDir: its parent is root's alone (0700), and Claude Code, as the account, makes
	// its session's directories under HOME by absolute path.
	dir, err := os.MkdirTemp("", "sandcheck-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	h, err := nethost.Start(context.Background(), nethost.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	probe := fmt.Sprintf("curl -s -m 5 http://%s/bench; curl -s -m 5 http://%s/bench", h.Allowed.IP, h.Denied.IP)
	one := func(i int) {
		run := filepath.Join(dir, fmt.Sprint("run-", i))
		ws := filepath.Join(run, "workspace")
		os.MkdirAll(ws, 0o755)
		inv, err := tg.Prepare(&targets.Session{Dir: run, Workspace: ws, Env: acct.Env(os.Environ()), Command: []string{"sh", "-c", probe},
			Policy: targets.Policy{AllowedHosts: []string{h.Allowed.IP.String()}, WritablePaths: []string{ws}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := acct.Chown(run, nil); err != nil {
			b.Fatal(err)
		}
		argv := acct.Command(inv.Argv, nil)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = inv.Env, inv.Dir
		since := len(h.Hits())
		out, err := cmd.CombinedOutput()
		res := inv.Agent.Finish()
		if err != nil || !res.Ran || res.Failed {
			b.Fatalf("bare claude -p: %v (ran %v, exit %d, failed %v): %.300s\n%s", err, res.Ran, res.Exit, res.Failed, res.Output, out)
		}
		floorDid(b, "bare claude -p", h.Hits()[since:], "/bench", 1)
	}
	bare := func() time.Duration {
		start := time.Now()
		for i := range n {
			one(i)
		}
		return time.Since(start)
	}
	for b.Loop() {
		var bareMS, trialMS, ratios []float64
		for range 3 {
			bd := bare()
			td := timed(b, "run -j1", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "1", "--target", claudecode.Name,
				"--label-filter", "network", "--out", filepath.Join(b.TempDir(), "run"))
			bareMS = append(bareMS, float64(bd.Milliseconds())/float64(n))
			trialMS = append(trialMS, float64(td.Milliseconds())/float64(n))
			ratios = append(ratios, float64(td)/float64(bd))
		}
		b.ReportMetric(median(bareMS), "bare-claude-ms/run")
		b.ReportMetric(median(trialMS), "trial-ms")
		b.ReportMetric(median(ratios), "trial-vs-bare-x")
		b.Logf("claude-code %s: bare claude -p %.0f ms, sandcheck trial %.0f ms (per round: bare %.0f, trial %.0f)",
			tg.Version(), median(bareMS), median(trialMS), bareMS, trialMS)
	}
}
