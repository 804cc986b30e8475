// Package model is the vocabulary every layer of sandcheck shares: the outcomes of a scenario
// and their severities, the cells of a matrix, the records of finished trials and the verdicts
// they hold, the channels a probe tries, and the capabilities a sandbox can express. It imports
// only the standard library and nothing of sandcheck, so the probe, the fixtures, the adapters,
// the runner and every report read the same words without importing each other (see
// internal/layering, which keeps it so).
package model
