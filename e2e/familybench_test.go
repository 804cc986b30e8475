package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// BenchmarkFamiliesVsFloor: what each scenario family of the default matrix costs next to its
// floor, the same number of bare starts of the same srt on this machine (issue 32: a trial costs
// its sandbox starts and little more). A run of the default matrix (-j 1, as the unprivileged
// account, SANDCHECK_BENCH_N trials, default 3) journals each family's wall time and sandbox
// starts (model.FamilyCost). A family's floor is its starts times one bare start (bareSRT, as the
// same account, with the network check's two curls); the network family's runs the trial's own
// command, the probe (bareProbe); the concurrency family starts its sessions k at a time, so its
// floor is starts/k rounds of k bare starts at once. Reported per family: the
// ratio of its time to its floor; and for the default matrix's trial, its whole duration (the
// runner's share included) and the run's wall time, each to the sum of the floors.
//
//	go test ./e2e -run '^$' -bench FamiliesVsFloor -benchtime 1x
func BenchmarkFamiliesVsFloor(b *testing.B) {
	f := newBareFixture(b)
	n := benchN(3)
	const bareStarts = 10
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "run")
		cmd := exec.Command(bin, "run", "--plain", "-n", fmt.Sprint(n), "-j", "1", "--out", out)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		start := time.Now()
		stdout, err := cmd.CombinedOutput()
		runWall := time.Since(start)
		if !measured(err) {
			b.Fatalf("run: %v\n%s", err, stdout)
		}
		costs, trialMS, k := familyCosts(b, filepath.Join(out, "journal.jsonl"))
		one := bareSRT(b, f, f.acct, bareStarts, 1)().wall
		oneMS := float64(one.Milliseconds()) / bareStarts
		// The network family's own command is the probe's: its floor is a bare start running it.
		probeMS := float64(bareProbe(b, f, f.acct, bareStarts, 1)().wall.Milliseconds()) / bareStarts
		kMS := oneMS
		if k > 1 {
			kMS = float64(bareSRT(b, f, f.acct, bareStarts/2, k)().wall.Milliseconds()) / float64(bareStarts/2)
		}
		names := make([]string, 0, len(costs))
		for f := range costs {
			names = append(names, f)
		}
		slices.Sort(names)
		var floorSum float64
		lines := []string{"family | starts/trial | ms/trial | in the sandbox, ms/trial | floor ms/trial | x floor"}
		for _, f := range names {
			c := costs[f]
			floor := c.sessions * oneMS
			switch {
			case f == "concurrency" && k > 1:
				floor = c.sessions / float64(k) * kMS
			case f == "network":
				floor = c.sessions * probeMS
			}
			floorSum += floor
			ratio := c.ms / floor
			b.ReportMetric(ratio, f+"-vs-floor-x")
			lines = append(lines, fmt.Sprintf("%s | %.1f | %.0f | %.0f | %.0f | %.2f", f, c.sessions, c.ms, c.sessionMS, floor, ratio))
		}
		b.ReportMetric(oneMS, "bare-start-ms")
		b.ReportMetric(probeMS, "bare-probe-start-ms")
		b.ReportMetric(trialMS/floorSum, "trial-vs-floor-x")
		b.ReportMetric(float64(runWall.Milliseconds())/float64(n)/floorSum, "run-vs-floor-x")
		b.Logf("the default matrix, srt as the user, %d trials at -j 1; a bare start %.0f ms (%d at once: %.0f ms; with the network probe: %.0f ms); a trial %.0f ms, the run %.0f ms per trial, the floors' sum %.0f ms:\n%s",
			n, oneMS, k, kMS, probeMS, trialMS, float64(runWall.Milliseconds())/float64(n), floorSum, strings.Join(lines, "\n"))
	}
}

// familyCost is one family's mean cost per trial, read from a journal.
type familyCost struct{ ms, sessions, sessionMS float64 }

var concurrentK = regexp.MustCompile(`^concurrency/.*/k([0-9]+)$`)

// familyCosts reads a journal's per-family costs, each the mean over its trials; the trials' mean
// duration; and how many sessions the concurrency family starts at once (its scenarios' kN).
func familyCosts(b *testing.B, path string) (map[string]familyCost, float64, int) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sum := map[string]familyCost{}
	var trials int
	var durMS float64
	k := 1
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r model.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || len(r.Families) == 0 {
			continue
		}
		trials++
		durMS += float64(r.DurationMS)
		for name, c := range r.Families {
			s := sum[name]
			s.ms += float64(c.MS)
			s.sessions += float64(c.Sessions)
			s.sessionMS += float64(c.SessionMS)
			sum[name] = s
		}
		for _, s := range r.Scenarios {
			if m := concurrentK.FindStringSubmatch(s.Name); m != nil {
				v, _ := strconv.Atoi(m[1])
				k = max(k, v)
			}
		}
	}
	if trials == 0 {
		b.Fatalf("%s: no trial recorded its families' costs", path)
	}
	for name, s := range sum {
		t := float64(trials)
		sum[name] = familyCost{s.ms / t, s.sessions / t, s.sessionMS / t}
	}
	return sum, durMS / float64(trials), k
}
