package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

// Reference values: Wilson (1927) with z=1.96; e.g. Newcombe (1998) table I and any
// statistics package (R binom.confint method="wilson").
func TestWilson(t *testing.T) {
	cases := []struct {
		k, n     int
		low, hig float64
	}{
		{0, 10, 0, 0.2775},
		{5, 10, 0.2366, 0.7634},
		{1, 100, 0.0018, 0.0545},
		{10, 10, 0.7225, 1},
		{0, 0, 0, 1},
		{81, 263, 0.2553, 0.3662}, // Newcombe (1998) example
	}
	for _, c := range cases {
		iv := Wilson(c.k, c.n)
		near(t, "wilson low", iv.Low, c.low, 1e-4)
		near(t, "wilson high", iv.High, c.hig, 1e-4)
	}
}

// Reference values: R binom.test(k, n)$conf.int.
func TestClopperPearson(t *testing.T) {
	cases := []struct {
		k, n     int
		low, hig float64
	}{
		{0, 10, 0, 0.3085},
		{5, 10, 0.1871, 0.8129},
		{1, 100, 0.000253, 0.05446},
		{10, 10, 0.6915, 1},
		{3, 20, 0.03207, 0.3789},
	}
	for _, c := range cases {
		iv := ClopperPearson(c.k, c.n, 0.05)
		near(t, "cp low", iv.Low, c.low, 1e-4)
		near(t, "cp high", iv.High, c.hig, 1e-4)
	}
}

func TestRegIncBeta(t *testing.T) {
	cases := []struct{ a, b, x, want float64 }{
		{2, 3, 0.5, 0.6875},               // P(Bin(4,.5) >= 2) = 11/16
		{1, 1, 0.3, 0.3},                  // uniform CDF
		{3, 1, 0.4, 0.064},                // x^a
		{1, 4, 0.2, 1 - math.Pow(0.8, 4)}, // 1-(1-x)^b
		{10, 10, 0.5, 0.5},                // symmetry
		{0.5, 0.5, 0.25, 1.0 / 3},         // arcsine law: (2/pi) asin(sqrt x)
		{5, 2, 0, 0},
		{5, 2, 1, 1},
	}
	for _, c := range cases {
		near(t, "I_x(a,b)", RegIncBeta(c.a, c.b, c.x), c.want, 1e-10)
	}
	if !math.IsNaN(RegIncBeta(-1, 2, 0.5)) {
		t.Error("RegIncBeta with a<0 must be NaN")
	}
	// Quantile is the inverse.
	for _, q := range []float64{0.025, 0.5, 0.975} {
		x := BetaQuantile(q, 3, 7)
		near(t, "I(BetaQuantile)", RegIncBeta(3, 7, x), q, 1e-10)
	}
}

func TestZeroFailureBounds(t *testing.T) {
	near(t, "rule of three n=100", RuleOfThree(100), 0.03, 1e-12)
	near(t, "rule of three n=1", RuleOfThree(1), 1, 1e-12)
	near(t, "exact zero-failure n=100", ZeroFailureUpper(100, 0.95), 0.02951, 1e-5)
	cases := []struct {
		p    float64
		want int
	}{{0.01, 299}, {0.05, 59}, {0.001, 2995}, {0.5, 5}}
	for _, c := range cases {
		got, err := TrialsNeeded(c.p, 0.95)
		if err != nil || got != c.want {
			t.Errorf("TrialsNeeded(%v) = %d, %v; want %d", c.p, got, err, c.want)
		}
		// The definition, checked directly: n clean trials suffice, n-1 do not.
		if math.Pow(1-c.p, float64(got)) > 0.05 || math.Pow(1-c.p, float64(got-1)) <= 0.05 {
			t.Errorf("TrialsNeeded(%v) = %d is not the smallest sufficient n", c.p, got)
		}
	}
	if _, err := TrialsNeeded(0, 0.95); err == nil {
		t.Error("TrialsNeeded(0) must fail")
	}
}

func TestFisherRose(t *testing.T) {
	cases := []struct {
		name           string
		k1, n1, k2, n2 int
		want           float64
	}{
		// Fisher's lady tasting tea: 3 of 4 right vs 1 of 4, one-sided p = 17/70.
		{"tea", 1, 4, 3, 4, 17.0 / 70},
		{"0/10 -> 5/10", 0, 10, 5, 10, 252.0 / 15504},
		{"no change", 2, 100, 2, 100, 1 - (94109400.0+16170000*24)/1552438800}, // 1-P(X=0)-P(X=1)
		{"fell", 5, 10, 0, 10, 1},
		{"empty base", 0, 0, 3, 10, 1},
	}
	for _, c := range cases {
		got, err := FisherRose(c.k1, c.n1, c.k2, c.n2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		near(t, c.name, got, c.want, 1e-4)
	}
	if _, err := FisherRose(5, 4, 0, 1); err == nil {
		t.Error("k > n must be an error")
	}
}

func TestParseUntil(t *testing.T) {
	good := map[string]Hypotheses{
		"rate<=0.01 vs rate>=0.05":     {0.01, 0.05},
		"  rate <= 1% vs rate >= 5%  ": {0.01, 0.05},
		"rate<=1e-3 vs rate>=0.02":     {0.001, 0.02},
	}
	for in, want := range good {
		got, err := ParseUntil(in)
		if err != nil || math.Abs(got.P0-want.P0) > 1e-12 || math.Abs(got.P1-want.P1) > 1e-12 {
			t.Errorf("ParseUntil(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "rate<0.01 vs rate>0.05", "rate<=0.05 vs rate>=0.01", "rate<=0 vs rate>=0.5", "rate<=x vs rate>=0.5"} {
		if _, err := ParseUntil(in); err == nil {
			t.Errorf("ParseUntil(%q) accepted", in)
		}
	}
	if s := (Hypotheses{0.01, 0.05}).String(); s != "rate<=0.01 vs rate>=0.05" {
		t.Errorf("String() = %q", s)
	}
}

func TestSPRTBoundariesAndSteps(t *testing.T) {
	s, err := NewSPRT(Hypotheses{0.01, 0.05}, 0.05, 0.05, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "A", s.A, math.Log(0.95/0.05), 1e-12)
	near(t, "B", s.B, math.Log(0.05/0.95), 1e-12)
	// Two failures in a row: LLR = 2 ln 5 = 3.22 > A.
	if d := s.Step(true); d != Continue {
		t.Fatalf("after 1 failure: %v", d)
	}
	if d := s.Step(true); d != AcceptH1 {
		t.Fatalf("after 2 failures: %v", d)
	}
	if d := s.Step(false); d != AcceptH1 {
		t.Fatal("decision must stick")
	}
	if d, at := s.Decision(); d != AcceptH1 || at != 2 {
		t.Fatalf("Decision() = %v at %d", d, at)
	}

	// Clean trials: each adds ln(0.95/0.99); H0 needs ceil(2.944/0.04124) = 72 of them.
	s, _ = NewSPRT(Hypotheses{0.01, 0.05}, 0.05, 0.05, 0)
	n := 0
	for s.Step(false) == Continue {
		n++
	}
	if d, at := s.Decision(); d != AcceptH0 || at != 72 {
		t.Fatalf("clean run: %v at %d, want accept-h0 at 72", d, at)
	}
	if s.Judge(0, 72) != AcceptH0 || s.Judge(0, 71) != Continue || s.Judge(2, 2) != AcceptH1 {
		t.Error("Judge disagrees with Step")
	}

	s, _ = NewSPRT(Hypotheses{0.01, 0.05}, 0.05, 0.05, 10)
	for i := 0; i < 9; i++ {
		s.Step(false)
	}
	if d := s.Step(false); d != Truncated {
		t.Fatalf("budget: %v", d)
	}
	for _, bad := range [][2]float64{{0, 0.05}, {0.05, 0.6}} {
		if _, err := NewSPRT(Hypotheses{0.01, 0.05}, bad[0], bad[1], 0); err == nil {
			t.Errorf("alpha/beta %v accepted", bad)
		}
	}
}

// Wald's bounds: the realised error rates stay near alpha and beta. Simulated with a fixed seed,
// so the test is deterministic.
func TestSPRTOperatingCharacteristic(t *testing.T) {
	h := Hypotheses{0.01, 0.05}
	rng := rand.New(rand.NewPCG(1, 2))
	const runs = 3000
	errs := func(p float64, wrong Decision) float64 {
		bad := 0
		for i := 0; i < runs; i++ {
			s, _ := NewSPRT(h, 0.05, 0.05, 0)
			for s.Step(rng.Float64() < p) == Continue {
			}
			if d, _ := s.Decision(); d == wrong {
				bad++
			}
		}
		return float64(bad) / runs
	}
	if a := errs(h.P0, AcceptH1); a > 0.07 {
		t.Errorf("false flake rate at P0 = %.3f, want <= ~0.05", a)
	}
	if b := errs(h.P1, AcceptH0); b > 0.07 {
		t.Errorf("missed flake rate at P1 = %.3f, want <= ~0.05", b)
	}
}

func TestFixedN(t *testing.T) {
	h := Hypotheses{0.01, 0.05}
	n, c, err := FixedN(h, 0.05, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if BinomTail(c, n, h.P0) > 0.05 || BinomTail(c, n, h.P1) < 0.95 {
		t.Fatalf("FixedN = %d,%d does not meet the error rates", n, c)
	}
	// Normal approximation gives ~170; the exact answer is in that neighbourhood.
	if n < 120 || n > 260 {
		t.Fatalf("FixedN = %d, want near the normal approximation 170", n)
	}
	// And it is the smallest: no threshold works at n-1.
	ok := false
	for cc := 0; cc <= n-1; cc++ {
		if BinomTail(cc, n-1, h.P0) <= 0.05 && BinomTail(cc, n-1, h.P1) >= 0.95 {
			ok = true
		}
	}
	if ok {
		t.Fatalf("n-1 = %d also works; FixedN is not minimal", n-1)
	}
}

func TestCoFailure(t *testing.T) {
	c := NewCoFailure()
	// A dead proxy kills three network scenarios together; fs/write fails alone once.
	c.Add([]string{"net/a", "net/b", "net/c"})
	c.Add(nil)
	c.Add([]string{"net/c", "net/b", "net/a", "net/a"})
	c.Add([]string{"fs/write"})
	c.Add([]string{"net/a", "fs/write"}) // breaks fs/write's identity with nothing, but splits net/a off
	if c.Trials() != 5 {
		t.Fatalf("trials = %d", c.Trials())
	}
	groups := c.Groups()
	want := []Group{{Scenarios: []string{"net/b", "net/c"}, Failures: 2}}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups = %+v, want %+v", groups, want)
	}
	pairs := c.Pairs()
	if pairs[0] != (Pair{A: "net/a", B: "net/b", Together: 2, AFails: 3, BFails: 2}) {
		t.Fatalf("top pair = %+v", pairs[0])
	}
	if len(pairs) != 4 { // ab, ac, bc, a-fs
		t.Fatalf("pairs = %+v", pairs)
	}
}
