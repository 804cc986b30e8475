package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPreflight: exit 0 with a healthy srt; non-zero, naming the layer, with each broken one.
func TestPreflight(t *testing.T) {
	requireSandbox(t)
	cases := []struct {
		fault string
		code  int
		say   string
	}{
		{"", 0, "ok: allowed.sandcheck.test reachable"},
		{"bridge-absent", 1, "FAIL proxy dead: in-sandbox bridge not listening on 127.0.0.1"},
		{"host-bridge-dies", 1, "FAIL proxy dead: host-side bridge died"},
		{"open-proxy", 1, "FAIL proxy up but NOT ENFORCING"},
		{"bwrap-no-userns", 1, "FAIL sandbox refused to start: sandbox exited 1 before the command ran: bwrap: No permissions"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command(bin, "preflight", "--fault", c.fault, "--timeout", "20s")
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(out.String(), c.say) {
				t.Fatalf("exit %d, want %d; output %q lacks %q", code, c.code, out.String(), c.say)
			}
			if lines := strings.Count(strings.TrimSpace(out.String()), "\n") + 1; lines != 1 {
				t.Errorf("want a one-line reason, got %d lines", lines)
			}
			t.Logf("%s: %.2fs", c.fault, time.Since(start).Seconds())
		})
	}
}

// BenchmarkPreflight: wall time of a healthy preflight against srt's own start (`srt -c true`).
func BenchmarkPreflight(b *testing.B) {
	srt := srtPath(b) // make exports SANDCHECK_SRT; it does not put srt on PATH
	var pre, bare time.Duration
	for i := 0; i < b.N; i++ {
		s := time.Now()
		if out, err := exec.Command(bin, "preflight", "-q").CombinedOutput(); err != nil {
			b.Fatalf("preflight: %v %s", err, out)
		}
		pre += time.Since(s)
		s = time.Now()
		c := exec.Command(srt, "-c", "true")
		c.Dir = b.TempDir()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("srt -c true: %v %s", err, out)
		}
		bare += time.Since(s)
	}
	b.ReportMetric(float64(pre.Milliseconds())/float64(b.N), "preflight-ms")
	b.ReportMetric(float64(bare.Milliseconds())/float64(b.N), "srt-true-ms")
	b.ReportMetric(float64((pre-bare).Milliseconds())/float64(b.N), "overhead-ms")
}
