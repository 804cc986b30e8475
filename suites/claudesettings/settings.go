// Package claudesettings holds the scenarios only Claude Code has (label claude-settings): its
// permission modes, failIfUnavailable, allowUnsandboxedCommands, workspace trust and settings
// sources, each run through the real `claude -p` with the network probe (or the filesystem probe)
// as the scripted model's command, and the seed's own repro through it. Any other target reports
// them not-applicable.
package claudesettings

import (
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/claudecode"
)

// claudeCase is one configuration of Claude Code.
type claudeCase struct {
	group, name string // the scenario is claude-settings/GROUP/NAME; the check is NAME
	config      string // the configuration in words, for hints
	opt         claudecode.Options
	faults      []string // injected into the real sandbox for this case
	judge       claudeJudge
	managed     bool // the run's managed settings are laid over /etc (private mount namespace)
	filesystem  bool // the filesystem check instead of the network one
	// session finishes the options from the session (the probe's own command line).
	session func(o *claudecode.Options, s *targets.Session)
}

func (c claudeCase) scenario() string { return "claude-settings/" + c.group + "/" + c.name }

// trustStates are the workspace trust states the trust cases run under; each one's filesystem
// case sums up the filesystem checks of its trial: the family's aggregates, declared with their ids.
var trustStates = func() []string {
	states := []string{claudecode.TrustAccepted, claudecode.TrustDeclined, claudecode.TrustNone}
	for _, tr := range states {
		knownfindings.DeclareAggregate(claudeCase{group: "trust", name: tr + "/filesystem"}.scenario(), "the filesystem checks (filesystem/CHECK)")
	}
	return states
}()

// strict is sandbox.network.strictAllowlist: a non-allow-listed host is denied, never asked about.
var strict = map[string]any{"network.strictAllowlist": true}

func claudeCases() []claudeCase {
	var cs []claudeCase
	// Permission mode x allow-list x strictAllowlist, the seed's own invocation first.
	modes := []struct {
		name, perm string
		noAllow    bool
		words      string
	}{
		{"bypass", claudecode.PermissionBypass, false, "--dangerously-skip-permissions --allowedTools Bash (the seed's)"},
		{"allowed-tools", claudecode.PermissionDefault, false, "--allowedTools Bash"},
		{"no-allow-list", claudecode.PermissionDefault, true, "no permission flags"},
	}
	for _, m := range claudecode.PermissionModes {
		modes = append(modes, struct {
			name, perm string
			noAllow    bool
			words      string
		}{m, m, false, "--permission-mode " + m + " --allowedTools Bash"})
	}
	for _, m := range modes {
		for _, st := range []bool{false, true} {
			c := claudeCase{group: "permissions", name: m.name, config: m.words,
				opt: claudecode.Options{Permission: m.perm, NoAllowList: m.noAllow}}
			if st {
				c.name += "+strict-allowlist"
				c.config += " with sandbox.network.strictAllowlist"
				c.opt.Sandbox = strict
			}
			cs = append(cs, c)
		}
	}
	// failIfUnavailable x the fail-closed conditions and the seed's faults.
	for _, fail := range []bool{true, false} {
		for _, f := range []string{"socat-missing", "bwrap-missing", "bridge-cannot-listen", "bwrap-no-userns", "no-cap-sys-admin",
			"bridge-absent", "bridge-late", "bridge-mid", "host-bridge-dies"} {
			c := claudeCase{group: fmt.Sprintf("fail-if-unavailable/%v", fail), name: f, faults: []string{f},
				config: fmt.Sprintf("failIfUnavailable: %v, %s", fail, f),
				opt:    claudecode.Options{Sandbox: map[string]any{"failIfUnavailable": fail}}}
			if !fail {
				c.judge = mayRunLoudly
			}
			cs = append(cs, c)
		}
	}
	// allowUnsandboxedCommands x the model asking to run outside the sandbox.
	// In --allowedTools Bash mode, and in the seed's bypass mode where no one is asked.
	for _, bypass := range []bool{false, true} {
		for _, allow := range []bool{false, true} {
			c := claudeCase{group: "unsandboxed-commands", name: fmt.Sprintf("allow-%v", allow), judge: mustBeSafe,
				config: fmt.Sprintf("allowUnsandboxedCommands: %v, the model asking dangerouslyDisableSandbox: true", allow),
				opt: claudecode.Options{Sandbox: map[string]any{"allowUnsandboxedCommands": allow},
					ToolInput: map[string]any{"dangerouslyDisableSandbox": true}}}
			if bypass {
				c.name += "+bypass"
				c.config += ", --dangerously-skip-permissions"
				c.opt.Permission = claudecode.PermissionBypass
			}
			cs = append(cs, c)
		}
	}
	// Workspace trust x the network and the filesystem check.
	for _, tr := range trustStates {
		for _, fs := range []bool{false, true} {
			c := claudeCase{group: "trust", name: tr + "/network", filesystem: fs, opt: claudecode.Options{Trust: tr},
				config: map[string]string{claudecode.TrustAccepted: "a trusted workspace", claudecode.TrustDeclined: "an untrusted workspace (hasTrustDialogAccepted: false)",
					claudecode.TrustNone: "a fresh HOME without .claude.json"}[tr]}
			if fs {
				c.name = tr + "/filesystem"
				c.config += " (the filesystem checks)"
			}
			cs = append(cs, c)
		}
	}
	return append(cs, settingsCases()...)
}

// settingsCases: where the settings live, which source wins, and settings that turn the sandbox
// off or cannot be read.
func settingsCases() []claudeCase {
	var cs []claudeCase
	for _, src := range claudecode.Sources {
		cs = append(cs, claudeCase{group: "sources", name: src, config: "the policy in the " + src + " settings",
			opt: claudecode.Options{Source: src}, managed: src == claudecode.SourceManaged})
	}
	off := `{"sandbox":{"enabled":false}}`
	widen := fmt.Sprintf(`{"sandbox":{"network":{"allowedDomains":[%q]}}}`, model.RoleDenied+"."+nethost.Domain)
	cs = append(cs,
		claudeCase{group: "precedence", name: "project-disables", config: "the policy in user settings, sandbox.enabled: false in the project's",
			opt: claudecode.Options{Layers: map[string]string{claudecode.SourceProject: off}}},
		claudeCase{group: "precedence", name: "local-disables", config: "the policy in user settings, sandbox.enabled: false in the project's local settings",
			opt: claudecode.Options{Layers: map[string]string{claudecode.SourceLocal: off}}},
		claudeCase{group: "precedence", name: "managed-over-user", config: "the policy in managed settings, sandbox.enabled: false in the user's",
			opt: claudecode.Options{Source: claudecode.SourceManaged, Layers: map[string]string{claudecode.SourceUser: off}}, managed: true},
		claudeCase{group: "precedence", name: "project-widens-allowlist", config: "the policy in user settings, the denied host allow-listed in the project's",
			opt: claudecode.Options{Layers: map[string]string{claudecode.SourceProject: widen}}},
		claudeCase{group: "precedence", name: "project-widens-allowlist+strict-allowlist",
			config: "the policy and strictAllowlist in user settings, the denied host allow-listed in the project's",
			opt:    claudecode.Options{Sandbox: strict, Layers: map[string]string{claudecode.SourceProject: widen}}},
		claudeCase{group: "settings", name: "invalid-json", config: "the user's settings.json is not JSON",
			opt: claudecode.Options{Layers: map[string]string{claudecode.SourceUser: `{"sandbox": {"enabled": true,`}}},
		claudeCase{group: "settings", name: "enabled-false", config: "sandbox.enabled: false", judge: notSandboxed,
			opt: claudecode.Options{Sandbox: map[string]any{"enabled": false}}},
		// excludedCommands runs matching commands outside the sandbox; with allowUnsandboxedCommands
		// false a version may refuse to (2.1.332 does): either is recorded, an escape fails.
		claudeCase{group: "settings", name: "excluded-command", config: "the probe's command in sandbox.excludedCommands (allowUnsandboxedCommands: false)",
			session: func(o *claudecode.Options, s *targets.Session) {
				o.Sandbox = map[string]any{"excludedCommands": []string{filepath.Base(s.Command[0]) + " *", s.Command[0] + " *"}}
			}},
	)
	return cs
}

var _ = Describe("Claude Code's own settings", Label(family), func() {
	for _, c := range claudeCases() {
		It(c.config, Label(c.label(), c.caseLabel()), func(ctx SpecContext) {
			cfg, err := harness.Current()
			Expect(err).NotTo(HaveOccurred())
			if cfg.Target != needs.Target {
				judge.NotApplicable(c.scenario(), fmt.Sprintf("a setting of Claude Code's own; %s has none", cfg.Target))
			}
			session := func(s *targets.Session) {
				o := c.opt
				if c.session != nil {
					c.session(&o, s)
				}
				s.Adapter = o
			}
			if c.filesystem {
				// The filesystem checks under this configuration: an aggregate of the checks,
				// known only where each breached check is a known finding of its own.
				ft, err := filesystem.RunWith(ctx, cfg, session)
				Expect(err).NotTo(HaveOccurred(), "claude-settings trial setup")
				specreport.AttachEvidence(ft)
				r := ft.Result
				judge.Expect(judge.Subject(ft.Target, ft.TargetVersion, ft.Fault), model.Scenario{Name: c.scenario(), Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: c.config + ": " + r.Hint,
					Breaches: verdict.FSBreaches(r, filesystem.CheckNames(), judge.FSPaths(ft))})
				return
			}
			var r classify.Result
			var stderr string
			var on knownfindings.Subject
			{
				opt := network.Options{Condition: c.name, Faults: c.faults, Session: session}
				if c.managed {
					var dir string
					opt.Setup = func(d string) error { dir = d; return nil }
					opt.BindsFn = func() []proc.Bind {
						return []proc.Bind{{Src: filepath.Join(dir, claudecode.ManagedDir), Dst: "/etc", Overlay: true}}
					}
				}
				nt, err := network.RunWith(ctx, cfg, opt)
				Expect(err).NotTo(HaveOccurred(), "claude-settings trial setup")
				specreport.AttachEvidence(nt)
				r, stderr, on = nt.Result, nt.Run.Stderr, judge.Subject(nt.Target, nt.TargetVersion, nt.Fault)
			}
			pass, hint, how := judgeClaude(c.judge, r, stderr, c.config)
			j := model.Scenario{Name: c.scenario(), Outcome: r.Outcome, Pass: pass, Hint: hint}
			if !pass {
				condition := c.name
				if how != "" {
					condition += ":" + how // a documented fail-open, keyed apart from a silent one
				}
				j.Breaches = []model.Breach{verdict.ConditionBreach(j.Name, condition, r.Outcome, hint, r.Egress)}
			}
			judge.Expect(on, j)
		})
	}
})
