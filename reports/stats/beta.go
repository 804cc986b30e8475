package stats

import "math"

// RegIncBeta is the regularized incomplete beta function I_x(a, b), the binomial CDF's closed
// form: P(X >= k | n, p) = I_p(k, n-k+1). Evaluated by the continued fraction of Numerical Recipes
// (modified Lentz), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where that converges faster.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case math.IsNaN(x) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 1000
		eps     = 1e-15
		tiny    = 1e-300
	)
	// nonzero keeps a denominator of the recurrence off zero.
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1/nonzero(1-qab*x/qap)
	// step takes one term of the modified Lentz recurrence, with numerator aa, into c and d and
	// returns the factor the fraction's value takes.
	step := func(aa float64) float64 {
		d = 1 / nonzero(1+aa*d)
		c = nonzero(1 + aa/c)
		return d * c
	}
	h := d
	for m := 1; m <= maxIter; m++ {
		mf := float64(m)
		m2 := 2 * mf
		h *= step(mf * (b - mf) * x / ((qam + m2) * (a + m2)))            // even term
		del := step(-(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))) // odd term
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// BetaQuantile inverts RegIncBeta in x: the q-quantile of Beta(a, b). Bisection is slow but
// cannot diverge, and reports call it a handful of times per cell.
func BetaQuantile(q, a, b float64) float64 {
	if q <= 0 {
		return 0
	}
	if q >= 1 {
		return 1
	}
	lo, hi := 0.0, 1.0
	for i := 0; i < 200 && hi-lo > 1e-15; i++ {
		mid := (lo + hi) / 2
		if RegIncBeta(a, b, mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// BinomTail returns P(X >= k) for X ~ Binomial(n, p).
func BinomTail(k, n int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n {
		return 0
	}
	return RegIncBeta(float64(k), float64(n-k+1), p)
}
