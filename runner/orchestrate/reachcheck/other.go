//go:build !linux

// Package reachcheck checks, before a run, what its local trials hand the sandbox that the
// sandbox's user cannot reach (fixtures/reach); off Linux no local trial runs, and there is
// nothing to check.
package reachcheck

import (
	"io"

	"github.com/sandcheck/sandcheck/matrix"
)

// Matrix has nothing to check off Linux: every host's trials check what they meet where they run.
func Matrix(*matrix.Matrix, string, map[string]string, string, io.Writer) error { return nil }
