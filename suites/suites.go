// Package suites links sandcheck's Ginkgo specs, one folder per scenario family (their verdicts
// through judge), into whatever imports it: the sandcheck binary
// and this package's own test, which runs them all. They run against the target named by
// SANDCHECK_TARGET (default srt) under `go test`, `ginkgo` and `sandcheck trial`.
package suites

import (
	_ "github.com/sandcheck/sandcheck/suites/bypass"         // bypass classes (label bypass)
	_ "github.com/sandcheck/sandcheck/suites/claudesettings" // Claude Code's own settings (label claude-settings)
	_ "github.com/sandcheck/sandcheck/suites/concurrency"    // concurrent sessions (label concurrency)
	_ "github.com/sandcheck/sandcheck/suites/failclosed"     // fail-closed honesty (label failclosed)
	_ "github.com/sandcheck/sandcheck/suites/filesystem"     // filesystem isolation (label filesystem)
	_ "github.com/sandcheck/sandcheck/suites/network"        // network egress, the seed's properties (label network)
	_ "github.com/sandcheck/sandcheck/suites/untrusted"      // untrusted or degraded configuration (label untrusted)
)
