//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/preflight"
)

func init() {
	cli.Register("preflight", "one fast network trial with your settings; exit 0 only if nothing fails open (see --help)", preflightCmd)
}

// preflightCmd is the seed reporter's hand-written probe as a product: drive one sandboxed
// request to an allowed and a denied host, and fail closed unless the outcome is `correct`.
// A known finding of the target (targets/NAME/knownfindings.yaml) is not news, but a fail-open one still fails
// unless the user accepts the pinned findings by name with --accept-known.
func preflightCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("preflight", `[--target srt] [--settings FILE] [--timeout 5s] [--filesystem] [--accept-known]

It accepts known fail-closed findings (warned of) and known fail-open ones only with --accept-known.

Exit status:
  0  the sandbox enforces: the allowed host reachable, the denied one blocked on every channel
     (with --filesystem also: writes only in the workspace, the secret unreadable), except for
     known findings of this target version (targets/NAME/knownfindings.yaml): a fail-closed one (the allowed host
     blocked, a dead proxy, an allowed write refused) is printed as a warning; a fail-open one
     (the denied host reached, a file written or read against the policy) only with
     --accept-known, which lists each accepted finding: its id, what it breached, its note.
  1  a fail-open observation, known or not, that was not accepted; any failure no known finding
     covers; or the check could not be set up.
  2  usage or configuration error; also a PATH entry holding a program the sandbox starts, or
     the sandbox itself, that the sandbox's user cannot reach (docs/users.md).`, `  sandcheck preflight --settings ~/.srt-settings.json && run-my-agent
  sandcheck preflight --filesystem --accept-known   # srt 0.0.83: accepts its known git-hooks finding, by name
  sudo sandcheck preflight --user "$SUDO_USER"      # the sandbox as the account your agent runs as
  sandcheck preflight --fault bridge-absent    # see what a broken sandbox looks like (exit 1)
  sandcheck preflight --target claude-code --settings ~/.claude/settings.json   # Claude Code itself, scripted model
  sandcheck preflight --target claude-code --target-settings '{"permission_mode":"bypass"}'   # as claude -p --dangerously-skip-permissions

  In a GitHub Actions job, before the step that relies on the sandbox:
    - run: sandcheck preflight --settings .srt-settings.json --timeout 10s`, stderr)
	var o trialOptions
	o.bind(fs, true)
	timeout := fs.Duration("timeout", 10*time.Second, "give up (and fail) after this long")
	withFS := fs.Bool("filesystem", false, "also check filesystem isolation (write only the workspace, secret unreadable)")
	acceptKnown := fs.Bool("accept-known", false, "accept the target's pinned fail-open known findings (each is listed); without it they fail")
	quiet := fs.Bool("q", false, "print nothing on success (accepted findings and warnings are still printed)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	cfg, err := o.config()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: %v\n", err)
		return 2
	}
	if code := refuseUnreachable("preflight", cfg, false, stderr); code != 0 {
		return code
	}
	cfg.Timeout = *timeout
	ctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()
	known, err := knownfindings.Load()
	if err != nil {
		// Without the list nothing is known: every failure fails.
		fmt.Fprintf(stderr, "sandcheck preflight: warning: %v\n", err)
	}

	start := time.Now()
	res, err := preflight.Check(ctx, cfg, known, *withFS)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: FAIL %v\n", err)
		return 1
	}
	accept := preflight.Accept(*acceptKnown)
	// Known findings the check showed are named before any failure.
	preflight.WriteKnown(stderr, res.Matched, accept, res.Subject)
	if why := res.Failure(accept); why != "" {
		fmt.Fprintf(stderr, "sandcheck preflight: FAIL %s\n", why)
		return 1
	}
	if !*quiet {
		fmt.Fprintf(stdout, "sandcheck preflight: ok: %s (%s as %s, %.2fs)\n", res.Summary, res.Version, model.AsUser(cfg.User), time.Since(start).Seconds())
	}
	return 0
}
