package classify

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// A sandbox that refuses to start is quoted in its own words: the last line of its message, not
// the backtrace's boilerplate after it (Codex 0.171's panic, Node's stack).
func TestSandboxFailedQuotesTheMessageNotTheBacktrace(t *testing.T) {
	for stderr, want := range map[string]string{
		"\nthread 'main' (4428) panicked at linux-sandbox/src/tcp_net_setup.rs:52:31:\nfailed to create private TCP namespace: Permission denied (os error 13)\n" +
			"stack backtrace:\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n": "failed to create private TCP namespace: Permission denied (os error 13)",
		"thread 'main' panicked at src/main.rs:3:5:\nbwrap: setting up uid map: Permission denied\nstack backtrace:\n   0: rust_begin_unwind\n             at /rustc/x/library/std/src/panicking.rs:652:5\n   8: <unknown>\n": "bwrap: setting up uid map: Permission denied",
		"Error: Could not load settings\n    at load (/opt/srt/dist/cli.js:10:5)\n    at main (/opt/srt/dist/cli.js:99:1)\n":                                                                                                  "Error: Could not load settings",
		"bwrap: No permissions to create new namespace\n": "bwrap: No permissions to create new namespace",
	} {
		o, hint, stop := Preconditions(false, nil, false, false, 101, stderr)
		if o != model.SandboxFailed || !stop || !strings.HasSuffix(hint, ": "+want) {
			t.Errorf("stderr %q: %s %q, want the hint to end in %q", stderr, o, hint, want)
		}
	}
}
