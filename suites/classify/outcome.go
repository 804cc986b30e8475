// Package classify turns what a probe saw, and what the fixture servers logged of the same run,
// into an outcome (model's vocabulary). The servers' log is read first: egress it shows outweighs
// anything else the trial did. Everything here is a pure function of its input, so it is
// table-tested with recorded real runs. This package judges network trials and holds what every
// classifier shares (the preconditions of a trial, hits in a hint's words); bypass and filesystem
// trials are judged by its subpackages of those names.
package classify
