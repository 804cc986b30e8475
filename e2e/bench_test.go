package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/targets/srt"
)

// benchN is the number of srt probes per measurement (SANDCHECK_BENCH_N, default def).
func benchN(def int) int {
	if n, err := strconv.Atoi(os.Getenv("SANDCHECK_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return def
}

func timed(b *testing.B, name string, args ...string) time.Duration {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	return time.Since(start)
}

// BenchmarkRunnerVsShellLoop: the runner's overhead over a plain shell loop running the same
// `sandcheck trial` N times (goal <= 1.05x), and its -j2 speedup on 2 cores.
func BenchmarkRunnerVsShellLoop(b *testing.B) {
	skip.If(b, os.Geteuid() != 0, "needs root for fixture namespaces")
	n := benchN(40)
	for i := 0; i < b.N; i++ {
		loop := timed(b, "shell loop", "sh", "-c", fmt.Sprintf(
			`i=0; while [ $i -lt %d ]; do "%s" trial --emit --label-filter network >/dev/null || true; i=$((i+1)); done`, n, bin))
		j1 := timed(b, "run -j1", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "1", "--label-filter", "network", "--out", b.TempDir())
		j2 := timed(b, "run -j2", bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "2", "--label-filter", "network", "--out", b.TempDir())
		b.ReportMetric(float64(loop.Milliseconds())/float64(n), "loop-ms/trial")
		b.ReportMetric(float64(j1.Milliseconds())/float64(n), "run-j1-ms/trial")
		b.ReportMetric(float64(j1)/float64(loop), "overhead-x")
		b.ReportMetric(float64(j1)/float64(j2), "j2-speedup-x")
	}
}

// BenchmarkTrialVsBareSRT: what a sandcheck network trial costs next to the bare thing it
// measures, a shell loop running the same srt with two curls (the allowed and the denied
// fixture host, fixtures up for the whole loop) at -j1. Goal: <= 1.2x. Rounds alternate the two
// (SANDCHECK_BENCH_N trials each, default 20) and the median ratio is reported, with the -j2
// speedup of the real srt and where a trial's time goes (phases from the journal, median).
//
//	go test ./e2e -run '^$' -bench TrialVsBareSRT -benchtime 1x
func BenchmarkTrialVsBareSRT(b *testing.B) {
	skip.If(b, os.Geteuid() != 0, "needs root for fixture namespaces")
	srtBin, err := srt.Locate("")
	if err != nil {
		skip.Loudly(b, "%v", err)
	}
	n := benchN(20)
	dir := b.TempDir()
	h, err := nethost.Start(context.Background(), nethost.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ws := filepath.Join(dir, "workspace")
	os.MkdirAll(ws, 0o755)
	settings, _ := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": []string{h.Allowed.IP.String()}, "deniedDomains": []string{}},
		"filesystem": map[string]any{"allowWrite": []string{ws}, "denyRead": []string{}, "denyWrite": []string{}},
	})
	sf := filepath.Join(dir, "srt-settings.json")
	os.WriteFile(sf, settings, 0o644)
	probe := fmt.Sprintf("curl -s -m 5 http://%s/bench; curl -s -m 5 http://%s/bench", h.Allowed.IP, h.Denied.IP)
	bare := func() time.Duration {
		script := fmt.Sprintf(`cd %q && i=0; while [ $i -lt %d ]; do %q --settings %q -c %q >/dev/null 2>&1; i=$((i+1)); done`, ws, n, srtBin, sf, probe)
		return timed(b, "bare srt loop", "sh", "-c", script)
	}
	run := func(j int) (time.Duration, string) {
		out := filepath.Join(b.TempDir(), "run")
		d := timed(b, fmt.Sprintf("run -j%d", j), bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", fmt.Sprint(j), "--label-filter", "network", "--out", out)
		return d, filepath.Join(out, "journal.jsonl")
	}
	for b.Loop() {
		var ratios, speedups, bareMS, j1MS, j2MS []float64
		phases := map[string][]float64{}
		for range 3 {
			bd := bare()
			j1, journal := run(1)
			j2, _ := run(2)
			ratios = append(ratios, float64(j1)/float64(bd))
			speedups = append(speedups, float64(j1)/float64(j2))
			bareMS = append(bareMS, float64(bd.Milliseconds())/float64(n))
			j1MS = append(j1MS, float64(j1.Milliseconds())/float64(n))
			j2MS = append(j2MS, float64(j2.Milliseconds())/float64(n))
			for k, v := range journalPhases(b, journal) {
				phases[k] = append(phases[k], v...)
			}
		}
		b.ReportMetric(median(bareMS), "bare-ms/trial")
		b.ReportMetric(median(j1MS), "run-j1-ms/trial")
		b.ReportMetric(median(ratios), "trial-vs-bare-x")
		b.ReportMetric(median(j2MS), "run-j2-ms/trial")
		b.ReportMetric(median(speedups), "j2-speedup-x")
		var names []string
		for k := range phases {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, median(phases[k])))
		}
		b.Logf("trial-vs-bare per round %.2f; median ms per trial phase: %s", ratios, strings.Join(parts, ", "))
	}
}

// journalPhases reads each trial's phases from a journal, plus "runner": the trial's duration
// the phases do not account for (spawning the trial process, reading its output, the journal).
func journalPhases(b *testing.B, path string) map[string][]float64 {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			DurationMS int64            `json:"duration_ms"`
			Phases     map[string]int64 `json:"phases_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || len(r.Phases) == 0 {
			continue
		}
		rest := r.DurationMS
		for k, v := range r.Phases {
			out[k] = append(out[k], float64(v))
			rest -= v
		}
		out["runner"] = append(out["runner"], float64(rest))
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkKernelMatrix runs the kernel example (matrix/examples/kernels.yaml: the network
// scenario on five Debian kernels under QEMU TCG, plus this host; SANDCHECK_BENCH_N trials per
// cell, default the example's 20) and reports the wall time and, per kernel, trials per minute:
// of one guest (60 s over the mean trial time) and of the run.
//
//	go test ./e2e -run '^$' -bench KernelMatrix -benchtime 1x -timeout 60m
func BenchmarkKernelMatrix(b *testing.B) {
	skip.If(b, os.Geteuid() != 0, "needs root (vm hosts, fixture namespaces)")
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		skip.Loudly(b, "QEMU not installed (scripts/vm-deps.sh)")
	}
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "out")
		args := []string{"run", "--plain", "--json", "--matrix", "../matrix/examples/kernels.yaml", "--out", out}
		if n := os.Getenv("SANDCHECK_BENCH_N"); n != "" {
			args = append(args, "-n", n)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		start := time.Now()
		stdout, err := cmd.Output()
		wall := time.Since(start)
		if !measured(err) {
			b.Fatalf("run: %v\n%s", err, stdout)
		}
		type hostStat struct {
			trials, correct int
			ms              int64
			kernel          string
		}
		stats := map[string]*hostStat{}
		f, _ := os.Open(filepath.Join(out, "journal.jsonl"))
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r struct {
				Cell       struct{ Host string }
				Outcome    string
				DurationMS int64                   `json:"duration_ms"`
				HostFP     struct{ Kernel string } `json:"host_fp"`
			}
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			s := stats[r.Cell.Host]
			if s == nil {
				s = &hostStat{}
				stats[r.Cell.Host] = s
			}
			s.trials++
			s.ms += r.DurationMS
			if r.Outcome == "correct" {
				s.correct++
			}
			if r.HostFP.Kernel != "" {
				s.kernel = r.HostFP.Kernel
			}
		}
		f.Close()
		var hosts []string
		total := 0
		for h, s := range stats {
			hosts = append(hosts, h)
			total += s.trials
		}
		sort.Strings(hosts)
		lines := []string{"| host | kernel | trials | correct | mean trial | trials/min (one guest) |", "|---|---|---|---|---|---|"}
		for _, h := range hosts {
			s := stats[h]
			mean := float64(s.ms) / float64(s.trials) / 1000
			lines = append(lines, fmt.Sprintf("| %s | %s | %d | %d | %.1f s | %.1f |", h, s.kernel, s.trials, s.correct, mean, 60/mean))
		}
		b.Logf("kernel matrix: %d trials in %s (%.1f trials/min)\n%s", total, wall.Round(time.Second), float64(total)/wall.Minutes(), strings.Join(lines, "\n"))
		b.ReportMetric(wall.Minutes(), "wall-min")
		b.ReportMetric(float64(total), "trials")
		b.ReportMetric(float64(total)/wall.Minutes(), "trials/min")
	}
}
