package claudesettings

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// What Claude Code did with the probe under one configuration, read from the network trial's
// classification (the fixture servers' log first, as always). The outcome stays the classifier's;
// the class says how it came about, in Claude Code's terms.
const (
	classEnforced      = "enforced"       // correct: the allowed host only, through the sandbox's proxy
	classRefused       = "refused"        // Claude Code refused to run the command, loudly (sandbox-failed)
	classUnsandboxed   = "unsandboxed"    // the command ran outside any network sandbox: direct connections left
	classProxyApproved = "proxy-approved" // sandboxed, but the sandbox's proxy let a non-allow-listed host through
)

// claudeClass names what happened, with the evidence in a few words.
func claudeClass(r classify.Result) (class, detail string) {
	switch r.Outcome {
	case model.Correct:
		return classEnforced, r.Hint
	case model.SandboxFailed:
		return classRefused, r.Hint
	case model.NonEnforcing:
		for _, ch := range []string{model.ChanDirect, model.ChanDNS} {
			if c, ok := r.Channels[ch]; ok && (c.Denied == classify.Reached || c.Allowed == classify.Reached) {
				return classUnsandboxed, fmt.Sprintf("the command ran outside the sandbox (%s: %s)", ch, c.Hint)
			}
		}
		var via []string
		for _, ch := range []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS} {
			if c, ok := r.Channels[ch]; ok && c.Denied == classify.Reached {
				via = append(via, ch)
			}
		}
		if len(via) > 0 {
			return classProxyApproved, fmt.Sprintf("sandboxed (no direct way out), but the sandbox's proxy approved the denied host, "+
				"which the policy does not allow, on %s", strings.Join(via, ", "))
		}
		return string(r.Outcome), r.Hint
	}
	return string(r.Outcome), r.Hint
}

// warning is the first line of Claude Code's own stderr that speaks of its sandbox (not the
// harness's agent notes), or "".
func warning(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "agent") || strings.HasPrefix(l, "tool result:") {
			continue
		}
		if strings.Contains(strings.ToLower(l), "sandbox") {
			return l
		}
	}
	return ""
}

// claudeJudge is what a configuration must do.
type claudeJudge int

const (
	// mustBeSafe: enforce the policy, or refuse to run the command loudly.
	mustBeSafe claudeJudge = iota
	// mayRunLoudly: as mustBeSafe, or run unsandboxed with a warning (failIfUnavailable: false
	// promises exactly that: "Commands will run WITHOUT sandboxing"); a silent unconfined run fails.
	mayRunLoudly
	// notSandboxed: the configuration turns the sandbox off for the command (enabled: false,
	// excludedCommands); it is reported as not sandboxed by configuration, never as correct.
	notSandboxed
)

// judgeClaude decides one claude-settings verdict: pass, and what to say.
func judgeClaude(j claudeJudge, r classify.Result, stderr, config string) (pass bool, hint, condition string) {
	class, detail := claudeClass(r)
	switch {
	case j == notSandboxed && class == classEnforced:
		return false, "enforced although " + config + " turns the sandbox off: sandcheck cannot tell why (" + detail + ")", ""
	case j == notSandboxed:
		return false, fmt.Sprintf("not sandboxed by configuration (%s): %s: %s", config, class, detail), ""
	case class == classEnforced || class == classRefused:
		return true, class + ": " + detail, ""
	case j == mayRunLoudly && class == classUnsandboxed:
		if w := warning(stderr); w != "" {
			// What the setting allows, and says it does: still a fail-open, which only a known
			// finding (its condition "loudly") lets through, and only where it is accepted.
			return false, fmt.Sprintf("ran unsandboxed, loudly, as %s allows (Claude Code said: %q)", config, w), "loudly"
		}
		return false, fmt.Sprintf("ran unsandboxed without a word (%s): %s", config, detail), ""
	}
	return false, fmt.Sprintf("%s under %s: %s", class, config, detail), ""
}
