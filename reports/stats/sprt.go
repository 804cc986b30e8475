package stats

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Decision is what a sequential test says after a trial.
type Decision int

const (
	Continue  Decision = iota // keep running trials
	AcceptH0                  // rate <= P0: the cell is as good as claimed
	AcceptH1                  // rate >= P1: the cell is flaky
	Truncated                 // hit the trial budget before deciding
)

func (d Decision) String() string {
	switch d {
	case Continue:
		return "continue"
	case AcceptH0:
		return "accept-h0"
	case AcceptH1:
		return "accept-h1"
	case Truncated:
		return "undecided"
	}
	return fmt.Sprintf("decision(%d)", int(d))
}

// Hypotheses are the two failure rates an SPRT separates: H0 rate <= P0 vs H1 rate >= P1.
type Hypotheses struct {
	P0, P1 float64
}

func (h Hypotheses) String() string {
	return fmt.Sprintf("rate<=%s vs rate>=%s", fmtRate(h.P0), fmtRate(h.P1))
}

func fmtRate(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }

// untilRE matches the matrix spelling `rate<=0.01 vs rate>=0.05` (percentages allowed).
var untilRE = regexp.MustCompile(`^rate\s*<=\s*([0-9.eE+-]+)(%?)\s+vs\s+rate\s*>=\s*([0-9.eE+-]+)(%?)$`)

// ParseUntil reads the matrix's `until:` string. We keep the spelling human (it appears in the
// matrix and in reports) but parse it strictly so a typo cannot silently mean "run forever".
func ParseUntil(s string) (Hypotheses, error) {
	m := untilRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Hypotheses{}, fmt.Errorf("until %q: want \"rate<=P0 vs rate>=P1\"", s)
	}
	p0, err := parseRate(m[1], m[2])
	if err != nil {
		return Hypotheses{}, fmt.Errorf("until %q: P0: %w", s, err)
	}
	p1, err := parseRate(m[3], m[4])
	if err != nil {
		return Hypotheses{}, fmt.Errorf("until %q: P1: %w", s, err)
	}
	h := Hypotheses{p0, p1}
	if err := h.validate(); err != nil {
		return Hypotheses{}, fmt.Errorf("until %q: %w", s, err)
	}
	return h, nil
}

func parseRate(num, pct string) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("parse rate: %w", err)
	}
	if pct == "%" {
		v /= 100
	}
	return v, nil
}

func (h Hypotheses) validate() error {
	if !(h.P0 > 0 && h.P0 < h.P1 && h.P1 < 1) {
		return fmt.Errorf("need 0 < P0 < P1 < 1, got P0=%v P1=%v", h.P0, h.P1)
	}
	return nil
}

// SPRT is Wald's sequential probability ratio test on Bernoulli failures. It accumulates the log
// likelihood ratio of H1 over H0 and stops at A=ln((1-beta)/alpha) or B=ln(beta/(1-alpha)), which
// keeps the error rates near alpha (false flake) and beta (missed flake) while using, on average,
// far fewer trials than a fixed N when the true rate is away from the indifference zone.
type SPRT struct {
	H           Hypotheses
	Alpha, Beta float64
	Max         int // trial budget; 0 = unbounded

	A, B       float64 // upper (accept H1) and lower (accept H0) log boundaries
	stepFail   float64 // LLR increment for a failure
	stepPass   float64 // LLR increment for a pass
	LLR        float64
	N, K       int // trials and failures so far
	decision   Decision
	decidedAtN int
}

// NewSPRT validates the parameters and returns a test ready for Step.
func NewSPRT(h Hypotheses, alpha, beta float64, max int) (*SPRT, error) {
	if err := h.validate(); err != nil {
		return nil, fmt.Errorf("sprt: %w", err)
	}
	if !(alpha > 0 && alpha < 0.5) || !(beta > 0 && beta < 0.5) {
		return nil, fmt.Errorf("sprt: alpha %v and beta %v must be in (0, 0.5)", alpha, beta)
	}
	if max < 0 {
		return nil, fmt.Errorf("sprt: max %d < 0", max)
	}
	return &SPRT{
		H: h, Alpha: alpha, Beta: beta, Max: max,
		A:        math.Log((1 - beta) / alpha),
		B:        math.Log(beta / (1 - alpha)),
		stepFail: math.Log(h.P1 / h.P0),
		stepPass: math.Log((1 - h.P1) / (1 - h.P0)),
	}, nil
}

// Step records one trial and returns the decision. Once decided, further steps change nothing:
// the runner may have trials in flight when the decision lands, and those must not reopen it.
func (s *SPRT) Step(failed bool) Decision {
	if s.decision != Continue {
		return s.decision
	}
	s.N++
	if failed {
		s.K++
		s.LLR += s.stepFail
	} else {
		s.LLR += s.stepPass
	}
	s.decision = s.judge(s.LLR, s.N)
	if s.decision != Continue {
		s.decidedAtN = s.N
	}
	return s.decision
}

func (s *SPRT) judge(llr float64, n int) Decision {
	switch {
	case llr >= s.A:
		return AcceptH1
	case llr <= s.B:
		return AcceptH0
	case s.Max > 0 && n >= s.Max:
		return Truncated
	}
	return Continue
}

// Decision returns the current decision and the trial count at which it was reached (0 while
// continuing).
func (s *SPRT) Decision() (Decision, int) { return s.decision, s.decidedAtN }

// LLRFor is the log likelihood ratio after k failures in n trials. It depends only on the counts,
// so a report can restate the decision from merged journals without replaying trial order.
func (s *SPRT) LLRFor(k, n int) float64 {
	return float64(k)*s.stepFail + float64(n-k)*s.stepPass
}

// Judge classifies final counts k of n as the runner would have at the end.
func (s *SPRT) Judge(k, n int) Decision { return s.judge(s.LLRFor(k, n), n) }

// FixedN is the smallest fixed sample size n, with its rejection threshold c (declare "flaky" when
// failures >= c), that separates h with the same error rates as an SPRT: P(X>=c | P0) <= alpha and
// P(X<c | P1) <= beta, by the exact binomial. It is the yardstick the SPRT's savings are measured
// against.
func FixedN(h Hypotheses, alpha, beta float64) (n, c int, err error) {
	if err := h.validate(); err != nil {
		return 0, 0, fmt.Errorf("fixed n: %w", err)
	}
	const limit = 1_000_000
	for n = 1; n <= limit; n++ {
		// Smallest c whose false-alarm rate fits alpha maximises power; the tail shrinks in c.
		c = int(h.P0 * float64(n))
		for c <= n && BinomTail(c, n, h.P0) > alpha {
			c++
		}
		if c > n {
			continue
		}
		if BinomTail(c, n, h.P1) >= 1-beta {
			return n, c, nil
		}
	}
	return 0, 0, fmt.Errorf("fixed n: no n <= %d separates %v", limit, h)
}
