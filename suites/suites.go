// Package suites links sandcheck's Ginkgo specs, one package per scenario family (core, bypass,
// claudesettings; their verdicts through judge), into whatever imports it: the sandcheck binary
// and this package's own test, which runs them all. They run against the target named by
// SANDCHECK_TARGET (default srt) under `go test`, `ginkgo` and `sandcheck trial`.
package suites

import (
	_ "github.com/sandcheck/sandcheck/suites/bypass"         // bypass classes (label bypass)
	_ "github.com/sandcheck/sandcheck/suites/claudesettings" // Claude Code's own settings (label claude-settings)
	_ "github.com/sandcheck/sandcheck/suites/core"           // network, filesystem, untrusted, failclosed, concurrency
)
