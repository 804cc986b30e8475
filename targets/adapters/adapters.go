// Package adapters links every sandbox adapter into a binary: the one list of them. Each adapter
// registers itself (targets.Register) from init; importing this package is how the command, the
// specs and the tools get them all, on every platform (a matrix names them on Windows too, where
// trials run inside a wsl host).
package adapters

import (
	_ "github.com/sandcheck/sandcheck/targets/bwrap"      // plain bubblewrap
	_ "github.com/sandcheck/sandcheck/targets/claudecode" // Claude Code's Bash sandbox
	_ "github.com/sandcheck/sandcheck/targets/codex"      // OpenAI Codex
	_ "github.com/sandcheck/sandcheck/targets/command"    // any sandbox, through templates
	_ "github.com/sandcheck/sandcheck/targets/firejail"   // firejail
	_ "github.com/sandcheck/sandcheck/targets/srt"        // Anthropic's sandbox-runtime
)
