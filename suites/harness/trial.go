//go:build linux

// Package harness is the scaffolding every trial of a scenario shares: the Config read once from
// the environment, a private trial directory and workspace, the sandbox's user, the fixture hosts,
// the faults, the target's invocation run with a deadline and a process-group kill
// (suites/harness/proc), and the probe's observation read back. It judges nothing: the trial
// runners beside it (network, filesystem, bypass, concurrent) classify, and the specs call them.
package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/adapters" // every adapter, by name
)

// Trial is the scaffolding every scenario shares: a private directory and workspace, fixture
// hosts when the scenario needs a network, the faults, the target, and the cleanup of all of it.
// Open sets its fields; the trial runners (suites/harness/...) read them, and set DropDAC and
// Setup.TTY before they run the sandbox.
type Trial struct {
	Config    Config
	Target    targets.Target
	Dir       string            // private to this trial; removed at the end
	Workspace string            // the sandboxed command's working directory
	Marks     string            // probe progress markers (inside the workspace)
	Nonce     string            // carried by the probe's frame and every request it makes
	Injection *faults.Injection // what the faults are told of the trial, and undo at its end
	Change    faults.Changes    // what the faults change about every sandboxed run
	Hosts     *nethost.Hosts
	undo      []func()
	// faultTools: the configured fault's tools on PATH, when that is all it changed;
	// faultSettings: it changed the settings only; faultProxy: those and a proxy on the ports
	// they name (Subject).
	faultTools    []string
	faultSettings bool
	faultProxy    bool
	// Tmp and SessionHome are every session's TMPDIR and HOME, the trial's own (in Dir, see
	// ownTmpAndHome): what the sandbox and the command inside leave there (sockets, empty mount
	// sources, a runtime's per-project state) goes with the trial instead of piling up in /tmp
	// or the account's HOME. Where a HOME is measured the scenario sets its own over it.
	Tmp         string
	SessionHome string
	// DropDAC runs the sandbox without root's file-permission override.
	DropDAC bool
	// Setup says where and with which terminal sandboxed commands start.
	Setup proc.Setup
	// Relocate, when set, rewrites the command line the target prepared (the sandbox started
	// from a copy of its installation in the workspace).
	Relocate func(argv []string) []string
	// Around, when set, wraps every sandboxed command line whole, as root, outside the switch
	// to the sandbox's user: a control group it enters before the sandbox starts.
	Around func(argv []string) []string
	// Account is who the sandbox runs as (fixtures/users); Env is its session's environment and
	// ProbeBin the probe binary as it can run it.
	Account  *users.Account
	Env      []string
	ProbeBin string
	ledgers  []*users.Ledger // the account's, and root's (users.Account.BeginTrial)
}

// Options say what a scenario needs of the scaffolding.
type Options struct {
	Network bool     // start fixture hosts
	Faults  []string // scenario-inherent faults, applied after the configured one
	// Isolated starts the fixture with its bypass extras in a private host namespace, where the
	// sandbox then runs (nethost.Options.Isolated); Names are extra fixture names.
	Isolated bool
	Names    []nethost.Name
}

// Open sets a trial up as opt asks; the caller closes it. On an error, what was set up is undone.
func Open(ctx context.Context, cfg Config, opt Options) (_ *Trial, err error) {
	// t stays set on every path (a `return nil, err` would nil a named result before the
	// deferred cleanup reads it).
	t := &Trial{Config: cfg, Nonce: RandomHex(8)}
	defer phases.Time(phases.Fixture)()
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if t.Target, err = NewTarget(cfg); err != nil {
		return nil, err
	}
	if t.Account, err = users.Resolve(cfg.User); err != nil {
		return nil, err
	}
	if t.ledgers, err = t.Account.BeginTrial(t.Nonce); err != nil {
		return nil, err
	}
	for _, l := range t.ledgers {
		reportSwept(l.Found)
		t.undo = append(t.undo, func() { reportSwept(l.End()) })
	}
	if t.Dir, err = os.MkdirTemp(cfg.WorkDir, "sandcheck-trial-"); err != nil {
		return nil, fmt.Errorf("trial dir: %w", err)
	}
	if !cfg.Keep {
		dir := t.Dir
		t.undo = append(t.undo, func() { os.RemoveAll(dir) })
	}
	if err := t.asUser(); err != nil {
		return nil, err
	}
	if err := t.checkReach(); err != nil {
		return nil, err
	}
	if err := t.ownTmpAndHome(); err != nil {
		return nil, fmt.Errorf("the trial's own TMPDIR and HOME: %w", err)
	}
	// srt needs an own working directory per concurrent run (it creates and removes placeholder
	// files there), so every trial gets a fresh workspace.
	t.Workspace = filepath.Join(t.Dir, "workspace")
	t.Marks = filepath.Join(t.Workspace, ".sandcheck")
	if err := os.MkdirAll(t.Marks, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	t.Injection = &faults.Injection{Dir: t.Dir, MarkDir: t.Marks, DenyRead: []string{SecretDir(t.Dir)}, ProbeBin: t.ProbeBin, Target: t.Target.Name()}
	if opt.Network {
		hopt := nethost.Options{Dir: t.Dir, OnHit: streamer(t.Target.Reach()), Isolated: opt.Isolated, Extras: opt.Isolated, Names: opt.Names}
		if t.Hosts, err = nethost.Start(ctx, hopt); err != nil {
			return nil, fmt.Errorf("fixture hosts: %w", err)
		}
		t.undo = append(t.undo, func() { t.Hosts.Close() })
		t.Injection.Denied = t.Addr(t.Hosts.Denied)
		t.Injection.Names = map[string]string{t.Hosts.Allowed.Name: t.Hosts.Allowed.IP.String(), t.Hosts.Denied.Name: t.Hosts.Denied.IP.String()}
		t.Injection.Listen, t.Injection.Dial, t.Injection.Lookup = t.Hosts.Listen, t.Hosts.Dial, t.Hosts.Lookup
		t.Injection.Own, t.Injection.Resolver = []netip.Addr{t.Hosts.HostEnd}, t.Hosts.Resolver
		if t.Hosts.Isolated() {
			t.Setup.Start = t.Hosts.Start
		}
	}
	for i, spec := range append([]string{cfg.Fault}, opt.Faults...) {
		f, params, err := faults.Parse(spec)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		t.Injection.Params = params
		if err := f.Apply(t.Injection); err != nil {
			return nil, err
		}
		changes := t.Injection.Changes()
		if i == 0 && f.Portable != nil && f.Portable(params) {
			t.faultTools = changes.ToolsOnly()
		}
		if i == 0 {
			t.faultSettings, t.faultProxy = changes.SettingsOnly(), changes.ProxyOnly()
		}
	}
	t.undo = append(t.undo, t.Injection.Cleanup)
	t.Change = t.Injection.Changes()
	return t, nil
}

// Close undoes everything, last first.
func (t *Trial) Close() {
	defer phases.Time(phases.Cleanup)()
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// Addr is how the probe and the policy name a fixture host: by name or by IP literal.
func (t *Trial) Addr(h nethost.Host) string {
	if t.Config.Hostnames == "ip" {
		return h.IP.String()
	}
	return h.Name
}

// session is the default sandboxed session: the probe under the policy "the allowed host, the
// workspace writable", with the faults' PATH and settings changes.
func (t *Trial) session(specFile string) *targets.Session {
	s := &targets.Session{
		Dir:          t.Dir,
		Workspace:    t.Workspace,
		Policy:       targets.Policy{WritablePaths: []string{t.Workspace}},
		Env:          t.sessionEnv(),
		UserSettings: t.Config.Settings,
		Patches:      t.Change.Patches,
	}
	if t.Hosts != nil {
		s.Policy.AllowedHosts = append([]string{t.Addr(t.Hosts.Allowed)}, t.Change.AllowedHosts...)
		if t.Hosts.Isolated() {
			// An agent in the isolated host reaches its stand-in model on that host's loopback.
			s.Listen = t.Hosts.Listen
		}
	}
	return s
}

// ownTmpAndHome makes the trial's own TMPDIR and HOME (see Tmp) in its directory; or, where that
// is on another file system than the TMPDIR the account's session has (SANDCHECK_WORKDIR on a
// WSL 2 Windows drive, 9p), in a directory of the trial's own in that TMPDIR, removed with the
// trial too: the sandbox's sockets must land on the file system they would for its user.
//
// Where the trial directory's path is long (a TMPDIR deep in a test's own), the TMPDIR is a short
// directory in /tmp instead: sandboxes put unix sockets there, and a socket's path has at most
// 107 bytes (srt 0.0.1: "Failed to create bridge sockets after 5 attempts").
func (t *Trial) ownTmpAndHome() error {
	root := t.Dir
	tmp := targets.EnvValue(t.Env, "TMPDIR", "/tmp")
	long := len(filepath.Join(t.Dir, "tmp")) > maxTmpDir
	if long {
		tmp = "/tmp"
	}
	if long || !sameFS(tmp, t.Dir) {
		dir, err := os.MkdirTemp(tmp, "sandcheck-trial-")
		if err != nil {
			return err
		}
		if !t.Config.Keep {
			t.undo = append(t.undo, func() { os.RemoveAll(dir) })
		}
		root = dir
	}
	t.Tmp, t.SessionHome = filepath.Join(root, "tmp"), filepath.Join(root, "session-home")
	for _, d := range []string{t.Tmp, t.SessionHome} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if root == t.Dir {
		return nil // Exec gives the trial directory to the account
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	return t.Account.Chown(root, nil)
}

// maxTmpDir is the longest TMPDIR a trial gives its sessions: room for the socket names sandboxes
// put there within a unix socket's 107 bytes. Measured with srt 0.0.1: a 73-byte TMPDIR works,
// an 81-byte one does not.
const maxTmpDir = 72

// sameFS says whether a and b are on one file system (an error reads as yes: nothing to move).
func sameFS(a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(a, &sa) != nil || syscall.Stat(b, &sb) != nil {
		return true
	}
	return sa.Dev == sb.Dev
}

// sessionEnv is the account's environment with the trial's own TMPDIR and HOME (see Tmp). srt
// still gives the command inside TMPDIR=/tmp/claude, which the filesystem scenario measures.
func (t *Trial) sessionEnv() []string {
	env := targets.SetEnv(t.Env, "TMPDIR", t.Tmp)
	if _, keeps := t.Target.(targets.AccountHomed); !keeps {
		env = targets.SetEnv(env, "HOME", t.SessionHome)
	}
	return env
}

// Exec is one sandboxed run of the probe.
type Exec struct {
	Settings json.RawMessage
	Given
	Nonce    string // the probe's nonce: its frame and every request it makes carry it
	Run      proc.Run
	Out      probe.Output
	ParseErr error
}

// Given is what a run was given beside its command line (targets.Invocation): its working
// directory, its HOME, the files the adapter wrote for it and its agent's tool input. With the
// command line, what a standalone reproducer gives the sandbox again.
type Given struct {
	Dir        string         `json:"dir,omitempty"`
	Home       string         `json:"home,omitempty"` // a fresh one holds no file of the Layout's
	Layout     []targets.File `json:"layout,omitempty"`
	AgentInput map[string]any `json:"agent_input,omitempty"`
}

// SandboxRun is what one sandboxed run of the probe showed, as a trial's evidence records it.
type SandboxRun struct {
	Run proc.Run `json:"run"`
	Given
	Ran         bool               `json:"sandbox_ran"`
	Observation *probe.Observation `json:"observation,omitempty"`
	ParseError  string             `json:"parse_error,omitempty"` // the probe's output could not be read or trusted
}

// Session is what every classifier reads of the run before its checks.
func (x *Exec) Session() classify.Session {
	return classify.Session{Ran: x.Out.Ran, Obs: x.Out.Obs, ParseErr: x.ParseErr, Exit: x.Run.Exit, Stderr: x.Run.Stderr, TimedOut: x.Run.TimedOut}
}

// SandboxRun is x as evidence.
func (x *Exec) SandboxRun() SandboxRun {
	r := SandboxRun{Run: x.Run, Given: x.Given, Ran: x.Out.Ran, Observation: x.Out.Obs}
	if x.ParseErr != nil {
		r.ParseError = x.ParseErr.Error()
	}
	return r
}

// Exec writes the probe spec, lets mod adjust the session, and runs the probe under the target.
func (t *Trial) Exec(ctx context.Context, spec probe.Spec, mod func(*targets.Session), binds []proc.Bind) (*Exec, error) {
	if spec.Nonce == "" {
		spec.Nonce = t.Nonce
	}
	specFile, err := t.WriteSpec(spec, "probe-")
	if err != nil {
		return nil, err
	}
	sess := t.session(specFile)
	sess.Command = []string{t.ProbeBin, probe.Arg, specFile}
	if mod != nil {
		mod(sess)
	}
	if t.Change.PathOnly != "" {
		sess.Env = setPath(sess.Env, append(append([]string{}, t.Change.PathFirst...), t.Change.PathOnly))
	} else if len(t.Change.PathFirst) > 0 {
		sess.Env = prependPath(sess.Env, t.Change.PathFirst)
	}
	inv, err := t.Target.Prepare(sess)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", t.Target.Name(), err)
	}
	if inv.Agent != nil {
		// Finish is idempotent: on an error path below it only stops the agent.
		defer inv.Agent.Finish()
	}
	argv := inv.Argv
	if t.Relocate != nil {
		argv = t.Relocate(argv)
	}
	if t.Change.Wrap != nil {
		argv = t.Change.Wrap(argv)
	}
	if t.Hosts != nil && t.Config.Hostnames == "name" {
		binds = append(binds, proc.Bind{Src: t.Hosts.HostsFile, Dst: "/etc/hosts"}, proc.Bind{Src: t.Hosts.ResolvConf, Dst: "/etc/resolv.conf"})
	}
	// Everything the sandbox reads or writes in the trial directory is its user's, as a user's
	// project is (the adapter has just written its settings there).
	if err := t.Account.Chown(t.Dir, RootOwned); err != nil {
		return nil, err
	}
	drop := t.Change.DropCaps
	if t.DropDAC {
		drop = append(append([]string{}, drop...), "dac_override", "dac_read_search")
	}
	// The switch to the sandbox's user comes last, inside the private mount namespace that only
	// root can set up (proc.RunCommandIn makes it, with the binds): the sandbox and everything under it
	// run as the user.
	argv = t.Account.Command(argv, drop)
	if t.Around != nil {
		argv = t.Around(argv)
	}
	x := &Exec{Settings: json.RawMessage(inv.Settings), Given: Given{Dir: inv.Dir, Home: targets.EnvValue(inv.Env, "HOME", ""), Layout: inv.Layout, AgentInput: inv.AgentInput}}
	if !json.Valid(x.Settings) {
		x.Settings, _ = json.Marshal(inv.Settings)
	}
	x.Nonce = spec.Nonce
	x.Run = proc.RunCommandIn(ctx, t.Setup, argv, inv.Env, inv.Dir, spec.Nonce, t.Config.RunTimeout(), t.Config.KillGrace(), binds...)
	phases.Session(x.Run.Duration)
	var agentErr error
	if inv.Agent != nil {
		agentErr = throughAgent(&x.Run, inv.Agent.Finish())
	}
	x.Out, x.ParseErr = probe.Parse(x.Run.Stdout, spec.Nonce)
	if agentErr != nil {
		x.ParseErr = errors.Join(agentErr, x.ParseErr)
	}
	return x, nil
}

// WriteSpec writes a probe spec into the trial directory.
func (t *Trial) WriteSpec(spec probe.Spec, prefix string) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	f := filepath.Join(t.Dir, prefix+RandomHex(4)+".json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return "", fmt.Errorf("write probe spec: %w", err)
	}
	return f, nil
}

// Subject says what a trial ran against; every trial's evidence starts with it.
type Subject struct {
	Target        string `json:"target"`
	TargetVersion string `json:"target_version"`
	Fault         string `json:"fault,omitempty"`
	// FaultTools are the tools the configured fault replaced by broken ones first on PATH, when
	// that is all it changed: a reproducer then shows its finding with the same broken tools.
	FaultTools []string `json:"fault_tools,omitempty"`
	// FaultSettings: the configured fault changed the sandbox's settings and nothing else, so the
	// settings the evidence keeps show its finding with the healthy sandbox.
	FaultSettings bool `json:"fault_settings,omitempty"`
	// FaultProxy: the configured fault stood a proxy of its own in for the sandbox's, on the ports
	// the settings the evidence keeps name, and changed nothing else: a reproducer shows its
	// finding with the same proxy on those ports.
	FaultProxy bool `json:"fault_proxy,omitempty"`
}

// Subject is the trial's target, its version and the configured fault.
func (t *Trial) Subject() Subject {
	return Subject{Target: t.Target.Name(), TargetVersion: t.Target.Version(), Fault: t.Config.Fault, FaultTools: t.faultTools, FaultSettings: t.faultSettings, FaultProxy: t.faultProxy}
}

// SecretDir is where a trial's secret lives, DIR/home/.ssh: a fake private key holding a random
// token. Faults that tamper with deny-read bindings are told this path.
func SecretDir(dir string) string { return filepath.Join(dir, "home", ".ssh") }

// setPath replaces PATH with dirs.
func setPath(env, dirs []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "PATH="+strings.Join(dirs, ":"))
}

func prependPath(env, dirs []string) []string {
	out := make([]string, 0, len(env)+1)
	path := os.Getenv("PATH")
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			path = strings.TrimPrefix(e, "PATH=")
			continue
		}
		out = append(out, e)
	}
	return append(out, "PATH="+strings.Join(dirs, ":")+":"+path)
}

// RandomHex is n random bytes in hex: nonces, tokens, file names.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
