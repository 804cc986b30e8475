package stats

import "sort"

// CoFailure counts, over trials, how often each scenario failed and how often each pair failed in
// the same trial. One dead proxy fails every network scenario of a trial; grouping scenarios that
// always fail together lets a report say "one cause" instead of listing ten failures. Memory is
// O(scenarios^2), independent of the number of trials.
type CoFailure struct {
	trials int
	fails  map[string]int
	pairs  map[[2]string]int
}

// NewCoFailure returns an empty counter.
func NewCoFailure() *CoFailure {
	return &CoFailure{fails: map[string]int{}, pairs: map[[2]string]int{}}
}

// Add records one trial's failed scenarios (duplicates ignored).
func (c *CoFailure) Add(failed []string) {
	c.trials++
	set := make([]string, 0, len(failed))
	seen := map[string]bool{}
	for _, f := range failed {
		if !seen[f] {
			seen[f] = true
			set = append(set, f)
		}
	}
	sort.Strings(set)
	for i, a := range set {
		c.fails[a]++
		for _, b := range set[i+1:] {
			c.pairs[[2]string{a, b}]++
		}
	}
}

// Trials is how many trials were added.
func (c *CoFailure) Trials() int { return c.trials }

// Pair is how often A and B failed (alone and together).
type Pair struct {
	A        string `json:"a"`
	B        string `json:"b"`
	Together int    `json:"together"`
	AFails   int    `json:"a_fails"`
	BFails   int    `json:"b_fails"`
}

// Pairs lists every pair that failed together at least once, most frequent first.
func (c *CoFailure) Pairs() []Pair {
	out := make([]Pair, 0, len(c.pairs))
	for k, n := range c.pairs {
		out = append(out, Pair{A: k[0], B: k[1], Together: n, AFails: c.fails[k[0]], BFails: c.fails[k[1]]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Together != out[j].Together {
			return out[i].Together > out[j].Together
		}
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	return out
}

// Group is a set of scenarios that failed in exactly the same trials: one likely cause.
type Group struct {
	Scenarios []string `json:"scenarios"`
	Failures  int      `json:"failures"` // trials in which the whole group failed
}

// Groups returns the scenarios (two or more) that always failed together. "Always together" is
// together == fails(A) == fails(B), an equivalence (identical failure sets), so groups never
// overlap and need no clustering heuristics.
func (c *CoFailure) Groups() []Group {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for k, n := range c.pairs {
		if n == c.fails[k[0]] && n == c.fails[k[1]] {
			ra, rb := find(k[0]), find(k[1])
			if ra != rb {
				if ra < rb {
					parent[rb] = ra
				} else {
					parent[ra] = rb
				}
			}
		}
	}
	members := map[string][]string{}
	for s := range parent {
		r := find(s)
		members[r] = append(members[r], s)
	}
	var out []Group
	for r, m := range members {
		if len(m) < 2 {
			continue
		}
		sort.Strings(m)
		out = append(out, Group{Scenarios: m, Failures: c.fails[r]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Failures != out[j].Failures {
			return out[i].Failures > out[j].Failures
		}
		return out[i].Scenarios[0] < out[j].Scenarios[0]
	})
	return out
}
