// Package untrusted is the untrusted or degraded configuration family: the sandbox either
// enforces or fails loudly when its settings are missing, empty, invalid or unreadable.
//
// Sandbox starts (journal: families.untrusted.sessions): one per condition: each is a settings
// file (or environment) the sandbox reads once, at its start, so each needs a start of its own.
package untrusted

import (
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/judge"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/suites/verdict"
	"github.com/sandcheck/sandcheck/targets"
)

// condition is one way a sandbox's configuration can be untrusted or degraded.
type condition struct {
	name, what string
	opts       func(dir string) network.Options
}

// writeFile is a Setup step that writes a settings file of the given content.
func writeFile(path, content string, mode os.FileMode) error {
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// settingsFile points the sandbox at a file the Setup step prepares.
func settingsFile(name, content string, mode os.FileMode) func(dir string) network.Options {
	return func(string) network.Options {
		var path string
		return network.Options{
			Setup: func(dir string) error {
				path = filepath.Join(dir, name)
				if content == "<dir>" {
					return os.Mkdir(path, 0o755)
				}
				if content == "<missing>" {
					return nil
				}
				return writeFile(path, content, mode)
			},
			Session: func(s *targets.Session) { s.SettingsFile = path },
		}
	}
}

// untrustedConditions are the srt configurations a user can end up with by accident.
var untrustedConditions = []condition{
	{"settings-missing", "the settings file does not exist", settingsFile("settings.json", "<missing>", 0)},
	{"settings-empty", "the settings file is empty", settingsFile("settings.json", "", 0o644)},
	{"settings-invalid-json", "the settings file is not JSON", settingsFile("settings.json", "{\"network\": {", 0o644)},
	{"settings-unknown-keys", "the settings file has keys the sandbox does not know (a typo'd allow-list)",
		settingsFile("settings.json", `{"network":{"allowedDomainz":["denied.sandcheck.test"],"allowedDomains":[],"deniedDomains":[]},`+
			`"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"sandboxx":{"enabled":false}}`, 0o644)},
	{"settings-directory", "the settings path is a directory", settingsFile("settings.json", "<dir>", 0)},
	{"settings-unreadable", "the settings file cannot be read (mode 000, without root's DAC override)",
		func(dir string) network.Options {
			o := settingsFile("settings.json", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, 0)(dir)
			o.DropDAC = true
			return o
		}},
	{"fresh-home", "no settings argument and a fresh, empty HOME (the sandbox's own defaults)",
		func(string) network.Options {
			var home string
			return network.Options{
				Setup: func(dir string) error { home = filepath.Join(dir, "fresh-home"); return os.Mkdir(home, 0o755) },
				Session: func(s *targets.Session) {
					s.NoSettings = true
					// Appended after the session's HOME, not set over it: this one is measured, and
					// Claude Code's adapter takes a second HOME for the scenario's own.
					s.Env = append(s.Env, "HOME="+home)
				},
			}
		}},
	{"home-unwritable", "HOME is read-only",
		func(string) network.Options {
			var home string
			o := network.Options{
				Setup:   func(dir string) error { home = filepath.Join(dir, "ro-home"); return os.Mkdir(home, 0o755) },
				Session: func(s *targets.Session) { s.Env = append(s.Env, "HOME="+home) },
			}
			o.BindsFn = func() []proc.Bind { return []proc.Bind{{Src: home, Dst: home, RO: true}} }
			return o
		}},
	{"proxy-env-dead", "the caller's environment already points HTTP(S)_PROXY and ALL_PROXY at a dead port",
		func(string) network.Options {
			return network.Options{Session: func(s *targets.Session) {
				for _, k := range model.CallerProxyVars {
					s.Env = append(s.Env, k+"="+model.DeadCallerProxy)
				}
			}}
		}},
}

// untrustedNeeds is what a condition needs of the target: a settings file of its own to break,
// or, for a dead caller proxy, a proxy of its own that could adopt it.
func untrustedNeeds(name string) model.Capability {
	if name == "proxy-env-dead" {
		return model.CapProxyAllowList
	}
	return model.CapSettingsFile
}

// untrustedClass names what a sandbox did with an untrusted configuration.
func untrustedClass(r classify.Result) (class string, pass bool) {
	switch o := r.Outcome; o {
	case model.AllowedBlocked:
		// Default deny counts as enforcing, but a proxy that could not reach the allowed host
		// (a dead upstream the configuration leaked in) is a dead network nobody mentioned.
		for _, c := range r.Channels {
			if c.Allowed == classify.ProxyError {
				return "silent-degraded", false
			}
		}
		return "enforced", true
	case model.Correct:
		return "enforced", true
	case model.SandboxFailed:
		return "failed-loudly", true
	case model.ProxyDead, model.NonEnforcing:
		return "silent-degraded", false
	default:
		return string(o), false
	}
}

// Untrusted or degraded configuration: the sandbox either enforces (default deny) or fails loudly
// before the command runs. Running the command with a dead proxy and saying nothing, as the seed
// saw with an untrusted workspace, is the bug.
var _ = Describe("untrusted or degraded configuration", Label(family), func() {
	for _, c := range untrustedConditions {
		It(c.spec(), Label(c.label()), func(ctx SpecContext) {
			cfg, err := harness.Current()
			Expect(err).NotTo(HaveOccurred())
			target, err := harness.NewTarget(cfg)
			Expect(err).NotTo(HaveOccurred(), "target")
			if why := targets.Lacks(target, untrustedNeeds(c.name)); why != "" {
				judge.NotApplicable(c.scenario(), why)
			}
			opt := c.opts("")
			opt.Condition = c.name
			nt, err := network.RunWith(ctx, cfg, opt)
			Expect(err).NotTo(HaveOccurred(), "untrusted trial setup")
			specreport.AttachEvidence(nt)
			class, pass := untrustedClass(nt.Result)
			o := nt.Result.Outcome
			j := model.Scenario{Name: c.scenario(), Outcome: o, Pass: pass, Hint: class + ": " + nt.Result.Hint}
			if !pass {
				what := fmt.Sprintf("ran silently degraded (%s)", o)
				switch {
				case o == model.Timeout || o == model.HarnessError:
					what = fmt.Sprintf("not judged: %s (%s)", o, nt.Result.Hint)
				case class != "silent-degraded":
					what = fmt.Sprintf("ran: %s", o)
				}
				j.Breaches = []model.Breach{verdict.ConditionBreach(j.Name, c.name, o, what, nt.Result.Egress)}
			}
			judge.Expect(judge.Subject(nt.Target, nt.TargetVersion, nt.Fault), j)
		})
	}
})
