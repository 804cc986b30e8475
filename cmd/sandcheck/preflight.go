//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
)

func init() {
	register("preflight", "one fast network trial with your settings; exit 0 only if the sandbox enforces", preflightCmd)
}

// preflightCmd is the seed reporter's hand-written probe as a product: drive one sandboxed
// request to an allowed and a denied host, and fail closed unless the outcome is `correct`.
func preflightCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("preflight", "[--target srt] [--settings FILE] [--timeout 5s] [--filesystem]", `  sandcheck preflight --settings ~/.srt-settings.json && run-my-agent
  sandcheck preflight --fault bridge-absent    # see what a broken sandbox looks like (exit 1)

  In a GitHub Actions job, before the step that relies on the sandbox:
    - run: sandcheck preflight --settings .srt-settings.json --timeout 10s`, stderr)
	var o trialOptions
	o.bind(fs, true)
	timeout := fs.Duration("timeout", 10*time.Second, "give up (and fail) after this long")
	withFS := fs.Bool("filesystem", false, "also check filesystem isolation (write only the workspace, secret unreadable)")
	quiet := fs.Bool("q", false, "print nothing on success")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	cfg, err := o.config()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: %v\n", err)
		return 2
	}
	cfg.Timeout = *timeout
	ctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()

	start := time.Now()
	nt, err := harness.RunNetwork(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck preflight: FAIL could not set up the check: %v\n", err)
		return 1
	}
	if r := nt.Result; r.Outcome != classify.Correct {
		fmt.Fprintf(stderr, "sandcheck preflight: FAIL %s: %s\n", describe(r.Outcome), firstClause(r.Hint))
		return 1
	}
	if *withFS {
		ft, err := harness.RunFilesystem(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck preflight: FAIL could not set up the filesystem check: %v\n", err)
			return 1
		}
		if failed := fsFailures(ft.Result, cfg.Target, stderr); failed != "" {
			fmt.Fprintf(stderr, "sandcheck preflight: FAIL filesystem %s\n", failed)
			return 1
		}
	}
	if !*quiet {
		fmt.Fprintf(stdout, "sandcheck preflight: ok: %s reachable, %s blocked on every channel (%s, %.2fs)\n",
			nt.Allowed.Name, nt.Denied.Name, nt.TargetVersion, time.Since(start).Seconds())
	}
	return 0
}

// describe turns an outcome into the words of the seed report.
func describe(o classify.Outcome) string {
	switch o {
	case classify.ProxyDead:
		return "proxy dead"
	case classify.NonEnforcing:
		return "proxy up but NOT ENFORCING (a denied host was reachable)"
	case classify.AllowedBlocked:
		return "allowed host blocked"
	case classify.SandboxFailed:
		return "sandbox refused to start"
	}
	return string(o)
}

// fsFailures names the failed filesystem checks. The target's documented known findings
// (knownfindings/) are not news to the user: they are printed as warnings, not failures.
func fsFailures(r classify.FSResult, target string, warn io.Writer) string {
	if pre := r.Outcome; len(r.Checks) == 0 && pre != classify.Correct {
		return fmt.Sprintf("%s: %s", pre, r.Hint)
	}
	known, _ := knownfindings.SRT()
	names := make([]string, 0, len(r.Checks))
	for n := range r.Checks {
		names = append(names, n)
	}
	sort.Strings(names)
	var failed []string
	for _, n := range names {
		c := r.Checks[n]
		if c.Outcome == classify.Correct {
			continue
		}
		if f, ok := known.Lookup("filesystem/" + n); ok && target == known.Target && f.Matches(c.Outcome) {
			fmt.Fprintf(warn, "sandcheck preflight: warning: known finding %s (%s): %s\n", n, c.Outcome, c.Hint)
			continue
		}
		failed = append(failed, fmt.Sprintf("%s %s: %s", n, c.Outcome, c.Hint))
	}
	return strings.Join(failed, "; ")
}
