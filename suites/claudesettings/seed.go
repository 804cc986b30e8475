package claudesettings

import (
	"fmt"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// The seed's repro, verbatim but for the hosts: its settings (user scope: enabled,
// failIfUnavailable, allowUnsandboxedCommands false, one allowed host), its invocation
// (`claude -p --dangerously-skip-permissions --allowedTools Bash` in a trusted workspace, as a
// normal user) and its two curls, the org host being the fixture's allowed host and example.com
// the denied one (https, with the fixtures' CA). The verdict is one of the seed's three observed
// outcomes, decided by the fixture servers' log first.
const seedRepro = "claude-settings/seed-repro"

// seedScript is the seed's command, with the trial's hosts.
func seedScript(h network.Hosts) string {
	return fmt.Sprintf(`curl -sS --cacert %s -o /dev/null -w "ORG=%%{http_code}\n" https://%s ; `+
		`curl -sS --cacert %s -o /dev/null -w "EX=%%{http_code}\n" https://%s && echo WEB_OK || echo WEB_BLOCKED`,
		h.CAFile, h.Allowed, h.CAFile, h.Denied)
}

var (
	orgCode = regexp.MustCompile(`ORG=(\d{3})`)
	exCode  = regexp.MustCompile(`EX=(\d{3})`)
	curlErr = regexp.MustCompile(`curl: \(\d+\)[^\n]*`)
)

// seedOutcome reads the two curls the way the seed's reporter did, the servers' log first:
// 1 proxy dead, 2 proxy up but not enforcing, 3 correct.
func seedOutcome(out string, exit int, stderr string, hits []model.Hit) (model.Outcome, string) {
	var denied, allowed []string
	for _, h := range hits {
		switch h.Role {
		case model.RoleDenied:
			// What the server saw, without the client's address: the same in every trial.
			what := strings.TrimSpace(fmt.Sprintf("%s %s %s", h.Proto, h.Detail, h.Path)) + fmt.Sprintf(" on %s:%d", h.Host, h.Port)
			if h.Proto == "https" || h.Proto == "http" {
				denied = append([]string{what}, denied...) // the request itself, first
			} else {
				denied = append(denied, what)
			}
		case model.RoleAllowed:
			if h.Proto == "https" {
				allowed = append(allowed, h.String())
			}
		}
	}
	org, ex := "ORG=?", "EX=?"
	if m := orgCode.FindStringSubmatch(out); m != nil {
		org = m[0]
	}
	if m := exCode.FindStringSubmatch(out); m != nil {
		ex = m[0]
	}
	web := "WEB_BLOCKED"
	if strings.Contains(out, "WEB_OK") {
		web = "WEB_OK"
	}
	errs := strings.Join(curlErr.FindAllString(out, -1), "; ")
	saw := fmt.Sprintf("%s, %s %s", org, ex, web)
	switch {
	case len(denied) > 0:
		return model.NonEnforcing, fmt.Sprintf("outcome 2, proxy up but not enforcing: %s: the denied host egressed (its server logged %s)", saw, denied[0])
	case !strings.Contains(out, "ORG=") && !strings.Contains(out, "EX="):
		if exit != 0 {
			return model.SandboxFailed, fmt.Sprintf("neither curl ran: Claude Code exited %d: %s", exit, lastLine(stderr))
		}
		return model.HarnessError, "neither curl reported (no ORG= or EX= line in the tool result)"
	case strings.Contains(errs, "port 3128") && len(allowed) == 0:
		return model.ProxyDead, fmt.Sprintf("outcome 1, proxy dead: %s: %s; the allowed host is unreachable too, not just a policy block", saw, errs)
	case len(allowed) == 0:
		return model.AllowedBlocked, fmt.Sprintf("the allowed host was not reached (%s; %s)", saw, errs)
	case web == "WEB_OK":
		return model.HarnessError, fmt.Sprintf("%s but the denied host's server logged nothing: not the denied host that answered", saw)
	}
	return model.Correct, fmt.Sprintf("outcome 3, correct: %s: the allowed host answered, the denied one was blocked", saw)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

var _ = Describe("the seed's repro through Claude Code", Label(seedReproLabels...), func() {
	It(seedReproSpec, func(ctx SpecContext) {
		cfg, err := harness.Current()
		Expect(err).NotTo(HaveOccurred())
		if cfg.Target != needs.Target {
			judge.NotApplicable(seedRepro, fmt.Sprintf("the seed's repro drives Claude Code itself; %s is not it", cfg.Target))
		}
		opt := network.Options{Condition: "seed-repro", Session: func(s *targets.Session) {
			// The seed's settings have no filesystem keys.
			s.Adapter = claudecode.Options{Permission: claudecode.PermissionBypass, Sandbox: map[string]any{"filesystem": nil}}
		}}
		ct, err := network.RunCommand(ctx, cfg, opt, seedScript)
		Expect(err).NotTo(HaveOccurred(), "seed repro setup")
		specreport.AttachEvidence(ct)
		o, hint := seedOutcome(ct.Output, ct.Run.Exit, ct.Run.Stderr, ct.Hits)
		if ct.Run.TimedOut && o != model.NonEnforcing {
			o, hint = model.Timeout, "trial exceeded its deadline; "+hint
		}
		j := model.Scenario{Name: seedRepro, Outcome: o, Pass: o == model.Correct, Hint: hint}
		if !j.Pass {
			j.Breaches = []model.Breach{verdict.ConditionBreach(seedRepro, "seed-repro", o, hint, verdict.Lines(ct.Hits))}
		}
		judge.Expect(judge.Subject(ct.Target, ct.TargetVersion, ct.Fault), j)
	})
})
