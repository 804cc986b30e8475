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
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets/srt"
)

// benchN is the number of srt probes per measurement (SANDCHECK_BENCH_N, default def).
func benchN(def int) int { return benchInt("SANDCHECK_BENCH_N", def) }

// benchInt is the positive number in the environment variable name, or def.
func benchInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
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
	skip.UnlessRoot(b, "fixture namespaces")
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
// fixture host, fixtures up for the whole loop) at -j1. Goal: <= 1.2x. Like for like: as root
// (`run --user root` vs the loop as root) and as the dedicated unprivileged account, the
// default (`run` vs the loop under setpriv as that account, with its session's environment).
// Rounds alternate them (SANDCHECK_BENCH_ROUNDS, default 7, of SANDCHECK_BENCH_N trials each,
// default 10); the median ratios are reported, with the -j2 speedup of the real srt (default
// user) beside its floor (the bare probe loop two at a time), where a trial's time goes (phases
// from the journals of the default user's -j1 runs, median) and the share of CPU time the
// hypervisor stole meanwhile: this machine is a VM, and a round whose host was busy is slower on
// one side than the other.
//
//	go test ./e2e -run '^$' -bench TrialVsBareSRT -benchtime 1x
func BenchmarkTrialVsBareSRT(b *testing.B) {
	f := newBareFixture(b)
	n := benchN(10)
	root, _ := users.Resolve(model.UserRoot)
	bareRoot, bareUser := bareSRT(b, f, root, n, 1), bareSRT(b, f, f.acct, n, 1)
	bareUserProbe := bareProbe(b, f, f.acct, n, 1)
	// The same n probes two at a time: how much two cores give srt's own starts, the floor of
	// the runner's -j2 speedup.
	bareUserProbe2 := bareProbe(b, f, f.acct, n/2, 2)
	// A run whose srt failed a trial (exit 1: its relay start-up race under load shows as
	// proxy-dead) still measured the trials' time: it is counted and said, not fatal.
	notCorrect := 0
	run := func(j int, user string) (cost, string) {
		out := filepath.Join(b.TempDir(), "run")
		cmd := exec.Command(bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", fmt.Sprint(j),
			"--user", user, "--label-filter", "network", "--out", out)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		start := time.Now()
		stdout, err := cmd.CombinedOutput()
		d := costOf(cmd, start)
		if !measured(err) {
			b.Fatalf("run -j%d --user %s: %v\n%s", j, user, err, stdout)
		}
		if err != nil {
			notCorrect++
			b.Logf("run -j%d --user %s: a trial failed:\n%s", j, user, stdout)
		}
		return d, filepath.Join(out, "journal.jsonl")
	}
	rounds := benchInt("SANDCHECK_BENCH_ROUNDS", 7)
	for b.Loop() {
		steal := stealMeter()
		var ratios, probeRatios, rootRatios, speedups, bareSpeedups, bareMS, bareProbeMS, bareRootMS, j1MS, j1RootMS, j2MS []float64
		var bareSum, j1Sum cost // the default user's, over all rounds
		phases := map[string][]float64{}
		for range rounds {
			br := bareRoot()
			jr, _ := run(1, model.UserRoot)
			bu, bp, bp2 := bareUser(), bareUserProbe(), bareUserProbe2()
			j1, journal := run(1, model.UserUnprivileged)
			j2, _ := run(2, model.UserUnprivileged)
			rootRatios = append(rootRatios, float64(jr.wall)/float64(br.wall))
			ratios = append(ratios, float64(j1.wall)/float64(bu.wall))
			probeRatios = append(probeRatios, float64(j1.wall)/float64(bp.wall))
			bareProbeMS = append(bareProbeMS, ms(bp.wall, n))
			speedups = append(speedups, float64(j1.wall)/float64(j2.wall))
			bareSpeedups = append(bareSpeedups, float64(bp.wall)/float64(bp2.wall)*float64(n/2*2)/float64(n))
			bareRootMS = append(bareRootMS, ms(br.wall, n))
			j1RootMS = append(j1RootMS, ms(jr.wall, n))
			bareMS = append(bareMS, ms(bu.wall, n))
			j1MS = append(j1MS, ms(j1.wall, n))
			j2MS = append(j2MS, ms(j2.wall, n))
			bareSum.add(bu)
			j1Sum.add(j1)
			ph := journalPhases(b, journal)
			var trialsMS float64
			for _, d := range ph["duration"] {
				trialsMS += d
			}
			// The run's own cost beyond its trials: start, user accounts, reports.
			phases["run-fixed/trial"] = append(phases["run-fixed/trial"], (float64(j1.wall.Milliseconds())-trialsMS)/float64(n))
			for k, v := range ph {
				phases[k] = append(phases[k], v...)
			}
		}
		b.ReportMetric(median(bareRootMS), "bare-root-ms/trial")
		b.ReportMetric(median(j1RootMS), "run-root-j1-ms/trial")
		b.ReportMetric(median(rootRatios), "root-trial-vs-bare-x")
		b.ReportMetric(median(bareMS), "bare-ms/trial")
		b.ReportMetric(median(j1MS), "run-j1-ms/trial")
		b.ReportMetric(median(ratios), "trial-vs-bare-x")
		// The same commands as the trial's sandboxed run (the probe): the harness's share alone.
		b.ReportMetric(median(bareProbeMS), "bare-probe-ms/trial")
		b.ReportMetric(median(probeRatios), "trial-vs-bare-probe-x")
		// Two views that a busy hypervisor sways less than a round's ratio: all rounds' time
		// together, and the CPU time the processes used (steal is not charged to them).
		b.ReportMetric(float64(j1Sum.wall)/float64(bareSum.wall), "trial-vs-bare-all-rounds-x")
		b.ReportMetric(float64(j1Sum.cpu)/float64(bareSum.cpu), "cpu-trial-vs-bare-x")
		b.ReportMetric(ms(bareSum.cpu, n*rounds), "bare-cpu-ms/trial")
		b.ReportMetric(ms(j1Sum.cpu, n*rounds), "run-j1-cpu-ms/trial")
		b.ReportMetric(median(j2MS), "run-j2-ms/trial")
		b.ReportMetric(median(speedups), "j2-speedup-x")
		b.ReportMetric(median(bareSpeedups), "bare-j2-speedup-x")
		b.ReportMetric(median(speedups)/median(bareSpeedups), "j2-speedup-vs-bare-j2-x")
		b.ReportMetric(float64(notCorrect), "runs-with-a-failed-trial")
		b.ReportMetric(steal(), "cpu-stolen-%")
		var names []string
		for k := range phases {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, median(phases[k])))
		}
		b.Logf("trial-vs-bare per round: root %.2f, user %.2f; -j2 speedup per round %.2f (bare probe loop two at a time: %.2f); median ms per trial phase (user, -j1): %s",
			rootRatios, ratios, speedups, bareSpeedups, strings.Join(parts, ", "))
	}
}

// bareFixture is what a bare srt loop needs: the srt a trial runs, the unprivileged account, a
// directory the account can reach (its workspaces and settings, as a trial's are) and the
// fixture hosts, up until the benchmark ends.
type bareFixture struct {
	srtBin, dir string
	h           *nethost.Hosts
	acct        *users.Account
}

func newBareFixture(b *testing.B) bareFixture {
	b.Helper()
	skip.UnlessRoot(b, "fixture namespaces")
	srtBin, err := srt.Locate("")
	if err != nil {
		skip.Missing(b, "%v", err)
	}
	acct, err := users.Resolve(model.UserUnprivileged)
	if err != nil {
		b.Fatal(err)
	}
	sweepAfter(b, acct)
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
	b.Cleanup(func() { h.Close() })
	return bareFixture{srtBin: srtBin, dir: dir, h: h, acct: acct}
}

// sweepAfter removes, when b ends, what the account's sandboxes left in the shared temporary
// directories outside any trial (the bare loops: srt and Claude Code make directories there of
// their own), as a run does for its trials (users.Ledger).
func sweepAfter(b *testing.B, acct *users.Account) {
	l, err := acct.Begin("bench-" + b.Name())
	if err != nil {
		b.Fatal(err)
	}
	if l != nil {
		b.Cleanup(func() { l.End() })
	}
}

// bareSRT is the floor a trial is measured against: a shell loop, as who, starting srt rounds
// times with the two curls of the network check (the allowed and the denied fixture host, the
// workspace writable), parallel at a time (each round waits for all of them). The fixtures stay up
// for the whole loop: only the sandbox's own starts are in it.
func bareSRT(b *testing.B, f bareFixture, who *users.Account, rounds, parallel int) func() cost {
	b.Helper()
	return bareLoop(b, f, who, fmt.Sprintf("curl -s -m 5 http://%s/bench; curl -s -m 5 http://%s/bench", f.h.Allowed.IP, f.h.Denied.IP), "/bench", rounds, parallel)
}

// bareProbe is bareSRT with the network trial's own command: sandcheck's probe trying every
// channel against both fixture hosts (by address: the bare loop has no hosts file of the
// fixture's), as the trial's sandboxed run does. Its ratio to the trial is the harness's share
// alone; bareSRT's adds the probe's own work.
func bareProbe(b *testing.B, f bareFixture, who *users.Account, rounds, parallel int) func() cost {
	b.Helper()
	spec := probe.Spec{
		Nonce: "b3nc4", Channels: model.AllChannels, CAFile: f.h.CAFile, Resolver: f.h.Resolver.String(), Timeout: 3 * time.Second,
		Hosts: []probe.Host{
			{Role: model.RoleAllowed, Addr: f.h.Allowed.IP.String(), IP: f.h.Allowed.IP.String()},
			{Role: model.RoleDenied, Addr: f.h.Denied.IP.String(), IP: f.h.Denied.IP.String()},
		},
	}
	data, _ := json.Marshal(spec)
	file := filepath.Join(f.dir, "probe-spec.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return bareLoop(b, f, who, fmt.Sprintf("%q %s %q", bin, probe.Arg, file), "/http/"+spec.Nonce, rounds, parallel)
}

// bareLoop runs command under srt, as who, rounds times, parallel at a time. Each run must reach
// the allowed host's path (floorDid): a floor that did less than the trial is no floor.
func bareLoop(b *testing.B, f bareFixture, who *users.Account, command, path string, rounds, parallel int) func() cost {
	b.Helper()
	srtBin, dir, h := f.srtBin, f.dir, f.h
	ws := filepath.Join(dir, "workspace-"+who.Name)
	os.MkdirAll(ws, 0o755)
	os.Chown(ws, who.UID, who.GID)
	settings, _ := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": []string{h.Allowed.IP.String()}, "deniedDomains": []string{}},
		"filesystem": map[string]any{"allowWrite": []string{ws}, "denyRead": []string{}, "denyWrite": []string{}},
	})
	sf := filepath.Join(dir, "srt-settings-"+who.Name+".json")
	os.WriteFile(sf, settings, 0o644)
	one := fmt.Sprintf("%q --settings %q -c %q >/dev/null 2>&1", srtBin, sf, command)
	round := one
	if parallel > 1 {
		round = strings.Repeat(one+" & ", parallel) + "wait"
	}
	script := fmt.Sprintf(`cd %q && i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done`, ws, rounds, round)
	argv := who.Command([]string{"sh", "-c", script}, nil)
	return func() cost {
		since := len(h.Hits())
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = who.Env(os.Environ())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare srt loop as %s: %v\n%s", who.Name, err, out)
		}
		c := costOf(cmd, start)
		floorDid(b, "bare srt loop as "+who.Name, h.Hits()[since:], path, rounds*parallel)
		return c
	}
}

// floorDid fails b unless hits (what the fixture logged during a bare loop) show the loop did a
// trial's work (floorShort): a bare sandbox that refused to start, or ran its command unconfined,
// costs less than a trial for the wrong reason.
func floorDid(b *testing.B, what string, hits []model.Hit, path string, want int) {
	b.Helper()
	short, err := floorShort(hits, path, want)
	if err != nil {
		b.Fatalf("%s: %v", what, err)
	}
	if short > 0 {
		b.Logf("%s: %d of %d runs did not reach the allowed host (a start that failed): the floor is that much low", what, short, want)
	}
}

// floorShort says how many of want runs did not reach the allowed host's path, and is an error
// when anything else was reached or more than half of them fell short. Under load srt's own start
// sometimes loses its relay (the race trials see as proxy-dead): a few short runs make the floor
// that much low, which is said; more is a floor that is not one.
func floorShort(hits []model.Hit, path string, want int) (int, error) {
	got := 0
	for _, h := range hits {
		switch {
		case h.Egress():
			return 0, fmt.Errorf("the fixture logged egress, the floor is not a confined run: %s", h)
		case h.Proto == model.ProtoHTTP && h.Path == path && h.Role == model.RoleAllowed:
			got++
		}
	}
	if got*2 < want {
		return want - got, fmt.Errorf("the allowed host logged %d requests for %s, want %d: the sandboxed command did not run as a trial's does", got, path, want)
	}
	return max(want-got, 0), nil
}

// cost is what a measured command took: wall-clock time, and the CPU time of it and of every
// descendant it waited for (user and system).
type cost struct{ wall, cpu time.Duration }

func (c *cost) add(d cost) { c.wall += d.wall; c.cpu += d.cpu }

func costOf(cmd *exec.Cmd, start time.Time) cost {
	c := cost{wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		c.cpu = ps.UserTime() + ps.SystemTime()
	}
	return c
}

func ms(d time.Duration, n int) float64 { return float64(d.Milliseconds()) / float64(n) }

// stealMeter starts measuring the CPU time the hypervisor took from this VM (/proc/stat's steal);
// the returned func says how much, in % of all CPU time since.
func stealMeter() func() float64 {
	read := func() (steal, total float64) {
		b, _ := os.ReadFile("/proc/stat")
		line, _, _ := strings.Cut(string(b), "\n")
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseFloat(f, 64)
			total += v
			if i == 7 {
				steal = v
			}
		}
		return steal, total
	}
	s0, t0 := read()
	return func() float64 {
		s1, t1 := read()
		if t1 <= t0 {
			return 0
		}
		return 100 * (s1 - s0) / (t1 - t0)
	}
}

// journalPhases reads each trial's phases from a journal, plus "runner": the trial's duration
// the phases do not account for (spawning the trial process, reading its output, the journal),
// and "duration": the trial's whole.
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
		out["duration"] = append(out["duration"], float64(r.DurationMS))
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
	skip.UnlessRoot(b, "vm hosts, fixture namespaces")
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		skip.Missing(b, "QEMU not installed (scripts/vm-deps.sh)")
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
			phases          map[string][]float64
		}
		stats := map[string]*hostStat{}
		f, _ := os.Open(filepath.Join(out, "journal.jsonl"))
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r struct {
				Cell       struct{ Host string }
				Trial      int
				Outcome    string
				Hint       string
				Error      string
				DurationMS int64                   `json:"duration_ms"`
				HostFP     struct{ Kernel string } `json:"host_fp"`
				Phases     map[string]int64        `json:"phases_ms"`
			}
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			if r.Outcome != "correct" {
				b.Logf("%s trial %d: %s: %s %s", r.Cell.Host, r.Trial, r.Outcome, r.Hint, r.Error)
			}
			s := stats[r.Cell.Host]
			if s == nil {
				s = &hostStat{phases: map[string][]float64{}}
				stats[r.Cell.Host] = s
			}
			// Where a trial's time goes: the trial's phases, and the rest (the job's start and
			// transport, for a guest).
			rest := r.DurationMS
			for k, v := range r.Phases {
				s.phases[k] = append(s.phases[k], float64(v))
				rest -= v
			}
			if len(r.Phases) > 0 {
				s.phases["host"] = append(s.phases["host"], float64(rest))
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
		lines := []string{"| host | kernel | trials | correct | mean trial | trials/min (one guest) | median ms: sandbox, fixture, cleanup, specs+classify+report, start, host |",
			"|---|---|---|---|---|---|---|"}
		for _, h := range hosts {
			s := stats[h]
			mean := float64(s.ms) / float64(s.trials) / 1000
			p := func(k string) float64 { return median(s.phases[k]) }
			lines = append(lines, fmt.Sprintf("| %s | %s | %d | %d | %.1f s | %.1f | %.0f, %.0f, %.0f, %.0f, %.0f, %.0f |", h, s.kernel, s.trials, s.correct, mean, 60/mean,
				p("sandbox"), p("fixture"), p("cleanup"), p("specs")+p("classify")+p("report"), p("start"), p("host")))
		}
		b.Logf("kernel matrix: %d trials in %s (%.1f trials/min)\n%s", total, wall.Round(time.Second), float64(total)/wall.Minutes(), strings.Join(lines, "\n"))
		b.ReportMetric(wall.Minutes(), "wall-min")
		b.ReportMetric(float64(total), "trials")
		b.ReportMetric(float64(total)/wall.Minutes(), "trials/min")
	}
}
