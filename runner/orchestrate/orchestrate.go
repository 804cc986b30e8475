// Package orchestrate is what `sandcheck run`, `trial` and `bisect` do, as a library the command,
// the e2e tests and the scripts can call: the matrix read against the registries this binary
// links (targets, faults, host kinds), the command line's overrides laid over it, the versions
// of npm sandboxes resolved and installed, every host prepared and its trials dispatched to it
// (each trial is `sandcheck trial --emit ...` there), and the journal turned into reports.
package orchestrate

import (
	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/targets"
)

// Registry validates matrix names against what this binary knows.
func Registry() matrix.Registry {
	return matrix.Registry{
		Target:    targets.CheckSettings,
		Fault:     func(spec string) error { _, _, err := faults.Parse(spec); return err },
		Versioned: VersionedCheck,
		HostKinds: hosts.Matrix(),
	}
}

// LoadMatrix reads the matrix file, or the embedded default matrix when file is "".
func LoadMatrix(file string) (*matrix.Matrix, error) {
	if file == "" {
		return matrix.Default(Registry())
	}
	return matrix.Load(file, Registry())
}
