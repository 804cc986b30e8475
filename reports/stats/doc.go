// Package stats holds the small statistics sandcheck reports need: binomial confidence intervals
// (Wilson, Clopper-Pearson, rule of three), Fisher's exact test for baseline comparison, a
// Bernoulli SPRT for adaptive stopping, and co-failure counting. Standard library only, so the
// numbers can be audited here rather than trusted from a dependency.
package stats
