package stats

import (
	"fmt"
	"math"
)

// FisherRose is the one-sided Fisher exact test p-value that the failure rate rose from a
// baseline of k1 failures in n1 trials to k2 in n2: the probability, with the margins fixed and
// no real change, of seeing k2 or more failures in the new run (hypergeometric upper tail).
// Exact tests matter here because failure counts are tiny (0, 1, 3) where chi-square lies.
func FisherRose(k1, n1, k2, n2 int) (float64, error) {
	if n1 < 0 || n2 < 0 || k1 < 0 || k2 < 0 || k1 > n1 || k2 > n2 {
		return 0, fmt.Errorf("fisher: invalid table base %d/%d new %d/%d", k1, n1, k2, n2)
	}
	if n1 == 0 || n2 == 0 {
		return 1, nil // nothing to compare against; never call that a regression
	}
	total := k1 + k2 // failures in both runs
	n := n1 + n2
	hi := min(total, n2)
	p := 0.0
	for x := k2; x <= hi; x++ {
		p += math.Exp(logHyper(x, total, n2, n))
	}
	return math.Min(1, p), nil
}

// logHyper is log P(X=x) for X failures among n2 draws from n items with total failures.
func logHyper(x, total, n2, n int) float64 {
	return logChoose(total, x) + logChoose(n-total, n2-x) - logChoose(n, n2)
}

func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
