package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSPRTvsFixedN simulates the matrix default `rate<=0.01 vs rate>=0.05`, alpha=beta=0.05,
// at several true flake rates and reports the average trials an SPRT spends against the fixed N
// that reaches the same error rates (exact binomial). Read the sprt-trials/op and saving-x metrics.
func BenchmarkSPRTvsFixedN(b *testing.B) {
	h := Hypotheses{0.01, 0.05}
	fixed, _, err := FixedN(h, 0.05, 0.05)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []float64{0.005, 0.02, 0.10} {
		b.Run(fmt.Sprintf("rate=%.1f%%", p*100), func(b *testing.B) {
			// Each op simulates many SPRTs, so even `-benchtime 1x` (make bench) gives a stable mean.
			const sims = 5000
			rng := rand.New(rand.NewPCG(7, uint64(p*1e6)))
			total := 0
			for i := 0; i < b.N; i++ {
				for j := 0; j < sims; j++ {
					s, _ := NewSPRT(h, 0.05, 0.05, 2000)
					for s.Step(rng.Float64() < p) == Continue {
					}
					total += s.N
				}
			}
			avg := float64(total) / float64(b.N*sims)
			b.ReportMetric(avg, "sprt-trials/op")
			b.ReportMetric(float64(fixed), "fixed-trials/op")
			b.ReportMetric(float64(fixed)/avg, "saving-x")
		})
	}
}
