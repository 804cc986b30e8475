// Package targets holds one adapter per real sandbox. An adapter translates sandcheck's policy
// (allowed hosts, writable paths, denied reads) into the sandbox's own settings and wraps the
// probe command in it. Scenarios never talk to a sandbox any other way.
package targets

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/versions"
)

// Policy is what the scenario wants enforced, in sandcheck's own terms.
type Policy struct {
	AllowedHosts []string // names or IP literals reachable through the sandbox's proxy
	// DeniedHosts are never reachable, even where an allowed entry covers them (a wildcard).
	DeniedHosts   []string
	WritablePaths []string
	DenyRead      []string
	// DenyWrite are paths inside a writable one that must stay read-only.
	DenyWrite []string
	// ReadOnlyMethods lets only reading methods (GET, HEAD, OPTIONS) through to the allowed
	// hosts (model.CapMethodRules).
	ReadOnlyMethods bool
	// RefusePrivate refuses every name that resolves to a local or private address, allowed
	// ones too; allowed IP literals pass (model.CapPrivateGuard).
	RefusePrivate bool
	// ParentProxy is a proxy URL the sandbox's own proxy sends what it allows through
	// (model.CapParentProxy); "" none.
	ParentProxy string
	// WeakerNesting turns on the sandbox's weaker mode for nested use (model.CapWeakerNesting),
	// and lets the command make user namespaces of its own where the sandbox can be told to
	// (model.CapNestedUserns).
	WeakerNesting bool
	// Credentials are secrets of the caller's the command must not have in clear
	// (model.CapCredentials, model.CapCredentialMasking).
	Credentials []Credential
}

// Credential is one secret the sandbox withholds from the command, or masks: the command sees a
// stand-in, which the proxy swaps for the real value only on requests to InjectHosts.
type Credential struct {
	Env  string // an environment variable's name, or
	File string // a file's path (~/ is the session's HOME)
	Mask bool   // mask it; else withhold it (deny)
	// InjectHosts (Mask) are the hosts the real value may go to, and PlaintextInject lets the
	// proxy swap it on plain HTTP too, where otherwise only TLS it terminates gets it.
	InjectHosts     []string
	PlaintextInject bool
}

// Session is one sandboxed run: the policy, where it runs, and the command to wrap.
type Session struct {
	Dir       string   // trial-private directory for generated settings
	Workspace string   // working directory of the command (each trial gets its own)
	Policy    Policy   //
	Command   []string // argv to run inside the sandbox
	Env       []string // full environment for the sandbox process
	// UserSettings is a user's own settings file, merged under the generated policy.
	UserSettings string
	// SettingsFile, when set, is handed to the sandbox verbatim instead of generated settings:
	// scenarios about broken configuration point it at a missing, empty or invalid file.
	SettingsFile string
	// NoSettings runs the sandbox without a settings argument (its own default lookup).
	NoSettings bool
	// Patches let a fault change the generated settings (target-specific keys) before they are
	// written: e.g. point srt at an external proxy.
	Patches []func(settings map[string]any)
	// Adapter holds options only one adapter understands, set by that adapter's own scenarios
	// (claudecode.Options: permission mode, trust, where the settings live); others ignore it.
	Adapter any
	// Listen listens where the sandbox's host is (a trial's isolated host namespace), for what
	// the sandbox's side must reach there: an agent's stand-in model. Nil: this process's network.
	Listen func(network, addr string) (net.Listener, error)
}

// Loopback listens on a free 127.0.0.1 port where the session's sandbox runs (Session.Listen),
// or in this process's network when the session says nowhere else.
func (s *Session) Loopback() (net.Listener, error) {
	if s.Listen != nil {
		return s.Listen("tcp", "127.0.0.1:0")
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// Invocation is the command line that runs a Session under the sandbox.
type Invocation struct {
	Argv     []string
	Env      []string
	Dir      string
	Settings string // the settings text given to the sandbox, for the report
	// Layout is every file the adapter laid out for the run beside the command line (an agent's
	// settings in its HOME, its trust state): what a standalone reproducer writes again.
	Layout []File
	// AgentInput is the tool input the agent's model gave beside the command, if any.
	AgentInput map[string]any
	// Agent, when set, runs beside Argv for its lifetime: the command reaches the sandbox through
	// an agent's tool call, and its output comes back through Agent.Finish (see agent.go).
	Agent Agent
}

// File is one file an adapter wrote for a run.
type File struct {
	Path string `json:"path"`
	Text string `json:"text"`
	Mode uint32 `json:"mode"`
}

// Target is one sandbox under test.
type Target interface {
	Name() string
	Capabilities() []model.Capability
	// Reach lists the probe channels over which an allowed host must be reachable.
	Reach() []string
	Prepare(s *Session) (*Invocation, error)
	// Version describes the sandbox build under test (for host fingerprints and reports).
	Version() string
}

// Factory builds a target from its matrix settings.
type Factory func(settings map[string]string) (Target, error)

var factories byName[Factory]

// Register makes an adapter available by name; adapters call it from init.
func Register(name string, f Factory) { factories.set(name, f) }

// New builds the named target.
func New(name string, settings map[string]string) (Target, error) {
	f, ok := factories.get(name)
	if !ok || f == nil {
		return nil, fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(settings)
}

// Check validates a target's settings where they are written (a matrix, --target-settings), as
// the adapter will read them. Adapters whose settings can be wrong in ways worth knowing before
// a run register a check (RegisterCheck); the others accept whatever they are given.
type Check func(settings map[string]string) error

var checks byName[Check]

// RegisterCheck registers an adapter's settings check; adapters call it from init.
func RegisterCheck(name string, c Check) { checks.set(name, c) }

// Known says whether a target of that name is linked in.
func Known(name string) error {
	if _, ok := factories.get(name); !ok {
		return fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return nil
}

// CheckSettings checks the named target and its settings, flattened as the adapter gets them.
func CheckSettings(name string, settings map[string]any) error {
	if err := Known(name); err != nil {
		return err
	}
	if c, ok := checks.get(name); ok && c != nil {
		return c(FlattenSettings(settings))
	}
	return nil
}

// FlattenSettings is a target's settings as its factory receives them: strings as they are,
// lists and objects JSON-encoded.
func FlattenSettings(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}

// Names lists registered targets, sorted.
func Names() []string { return factories.names() }

// Starter is a target that says, before any session, the program its sessions start: an
// absolute path, or a name each session looks up on its PATH ("" when it cannot tell). Whoever
// the sandbox runs as must be able to run it (suites/harness checks that before a trial).
type Starter interface {
	Starts() string
}

// Seamed is a target with seams faults may act through (model.Seam); a target without any
// does not implement it.
type Seamed interface {
	Seams() []model.Seam
}

// Unjudgeable is a target that cannot be judged on a class of scenarios where sandcheck's
// fixture runs, because the fixture itself makes it turn the guard under test off (Codex's
// private-address guard, off so that any allowed name is reachable in 198.18.0.0/15).
// Unjudged says why for a class ("bypass/resolved-address") or one case of a class
// ("bypass/parent-proxy/rebind-loopback"), "" when it can be judged.
type Unjudgeable interface {
	Unjudged(class string) string
}

// UnjudgedReason is t's Unjudged for class, or "" for a target that can be judged on anything.
func UnjudgedReason(t Target, class string) string {
	if u, ok := t.(Unjudgeable); ok {
		return u.Unjudged(class)
	}
	return ""
}

// AgentConfigured is a target whose agent reads its own configuration from the working
// directory and keeps it read-only inside the sandbox (model.CapAgentConfig): AgentConfig lists
// those files, relative to the working directory.
type AgentConfigured interface {
	AgentConfig() []string
}

// AgentConfigFiles are the files a target keeps read-only as its agent's configuration (none for
// a target that is no agent).
func AgentConfigFiles(t Target) []string {
	if a, ok := t.(AgentConfigured); ok {
		return a.AgentConfig()
	}
	return nil
}

// AccountHomed is a target that runs with its account's own HOME, not the private one a trial
// gives every session (see harness.Trial.SessionHome); AccountHome says why.
type AccountHomed interface {
	AccountHome() string
}

// Offers reports whether a target offers every seam given.
func Offers(t Target, seams ...model.Seam) bool {
	s, _ := t.(Seamed)
	for _, want := range seams {
		if s == nil || !slices.Contains(s.Seams(), want) {
			return false
		}
	}
	return true
}

// DenyAll reports whether a target offers no way out at all (Reach is empty): the network
// scenario then expects the allowed host to be blocked too.
func DenyAll(t Target) bool { return len(t.Reach()) == 0 }

// ClaimHistory is a target whose releases claim a capability only from one release on:
// ClaimedFrom names that release ("" when the capability has no such history).
type ClaimHistory interface {
	ClaimedFrom(c model.Capability) string
}

// Unclaimed is why a target is not judged on what needs c: it does not claim it. It names the
// target's release and, where a release claims c from some point on, that one.
func Unclaimed(t Target, c model.Capability) string {
	what := t.Name()
	if v := versions.Extract(t.Version()); v != "" {
		what += " " + v
	}
	why := fmt.Sprintf("%s does not claim %s", what, c)
	if h, ok := t.(ClaimHistory); ok {
		if from := h.ClaimedFrom(c); from != "" {
			why += fmt.Sprintf(" (%s claims it from %s)", t.Name(), from)
		}
	}
	return why
}

// Lacks is why a target is not judged on what needs c (Unclaimed), or "" when it claims c or
// nothing is needed.
func Lacks(t Target, c model.Capability) string {
	if c == "" || Has(t, c) {
		return ""
	}
	return Unclaimed(t, c)
}

// Has reports whether a target has a capability.
func Has(t Target, c model.Capability) bool {
	for _, x := range t.Capabilities() {
		if x == c {
			return true
		}
	}
	return false
}

// LookPath finds an executable as the sandboxed session would: on the PATH of env (the session's
// environment, where faults put their shims first), else on this process's PATH.
func LookPath(name string, env []string) (string, error) {
	if strings.ContainsRune(name, '/') {
		return name, nil
	}
	for i := len(env) - 1; i >= 0; i-- {
		if p, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				c := filepath.Join(dir, name)
				if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return c, nil
				}
			}
			break
		}
	}
	return exec.LookPath(name)
}

// ShellJoin quotes argv for `sh -c`: each word in single quotes, its own quotes escaped.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// EnvValue is key's last non-empty value in env, or def.
func EnvValue(env []string, key, def string) string {
	v := def
	for _, e := range env {
		if x, ok := strings.CutPrefix(e, key+"="); ok && x != "" {
			v = x
		}
	}
	return v
}

// SetEnv returns env with key set to value (replacing any earlier assignment).
func SetEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return append(out, key+"="+value)
}
