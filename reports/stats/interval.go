package stats

import (
	"fmt"
	"math"
)

// Z95 is the two-sided 95% normal quantile used by the Wilson interval.
const Z95 = 1.959963984540054

// Interval is a closed interval [Low, High] on a rate.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

func (iv Interval) String() string { return fmt.Sprintf("[%.4f, %.4f]", iv.Low, iv.High) }

// Rate returns k/n, or 0 when nothing was measured (so callers never divide by zero).
func Rate(k, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// Wilson returns the Wilson score 95% interval for k failures in n trials. We prefer it to the
// normal (Wald) interval because it stays inside [0,1] and behaves at k=0, which is the common
// case for a healthy sandbox. n=0 gives [0,1]: nothing is known.
func Wilson(k, n int) Interval { return WilsonZ(k, n, Z95) }

// WilsonZ is Wilson with an arbitrary normal quantile z.
func WilsonZ(k, n int, z float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = clampK(k, n)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi := centre-half, centre+half
	// Pin the exact endpoints: rounding must not report a nonzero lower bound at k=0.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return Interval{math.Max(0, lo), math.Min(1, hi)}
}

// ClopperPearson returns the exact (conservative) two-sided 1-alpha interval for k of n, from
// beta quantiles. Use alpha=0.05 for 95%.
func ClopperPearson(k, n int, alpha float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = clampK(k, n)
	iv := Interval{0, 1}
	if k > 0 {
		iv.Low = BetaQuantile(alpha/2, float64(k), float64(n-k+1))
	}
	if k < n {
		iv.High = BetaQuantile(1-alpha/2, float64(k+1), float64(n-k))
	}
	return iv
}

// RuleOfThree is the approximate one-sided 95% upper bound 3/n on a rate after n trials with zero
// failures. It is what people quote; ZeroFailureUpper is the exact value it approximates.
func RuleOfThree(n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Min(1, 3/float64(n))
}

// ZeroFailureUpper is the exact one-sided upper bound 1-(1-conf)^(1/n) after n clean trials.
func ZeroFailureUpper(n int, conf float64) float64 {
	if n <= 0 {
		return 1
	}
	return 1 - math.Pow(1-conf, 1/float64(n))
}

// TrialsNeeded is the smallest n such that n trials with zero failures show the rate is below p
// with confidence conf (one-sided): (1-p)^n <= 1-conf. It answers "how long must the matrix run
// before a clean result means anything"; for p=0.01, conf=0.95 it is 299 (rule of three says 300).
func TrialsNeeded(p, conf float64) (int, error) {
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("trials needed: rate %v not in (0,1)", p)
	}
	if !(conf > 0 && conf < 1) {
		return 0, fmt.Errorf("trials needed: confidence %v not in (0,1)", conf)
	}
	n := int(math.Ceil(math.Log(1-conf) / math.Log1p(-p)))
	// Guard the ceiling against floating error on exact boundaries.
	for n > 1 && math.Pow(1-p, float64(n-1)) <= 1-conf {
		n--
	}
	for math.Pow(1-p, float64(n)) > 1-conf {
		n++
	}
	return n, nil
}

func clampK(k, n int) int {
	if k < 0 {
		return 0
	}
	if k > n {
		return n
	}
	return k
}
