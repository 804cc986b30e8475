// Package classify turns what a probe saw, and what the fixture servers logged of the same run,
// into an outcome (model's vocabulary). The servers' log is read first: egress it shows outweighs
// anything else the trial did. Everything here is a pure function of its input, so it is
// table-tested with recorded real runs.
package classify
