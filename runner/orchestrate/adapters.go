package orchestrate

// Every sandbox adapter is linked in on every platform, so a matrix names them on Windows too
// (where trials run inside a wsl host).
import (
	_ "github.com/sandcheck/sandcheck/targets/bwrap"
	_ "github.com/sandcheck/sandcheck/targets/claudecode"
	_ "github.com/sandcheck/sandcheck/targets/codex"
	_ "github.com/sandcheck/sandcheck/targets/command"
	_ "github.com/sandcheck/sandcheck/targets/firejail"
	_ "github.com/sandcheck/sandcheck/targets/srt"
)
