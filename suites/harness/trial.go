//go:build linux

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

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/bwrap"      // the adapters: each registers itself
	_ "github.com/sandcheck/sandcheck/targets/claudecode" //
	_ "github.com/sandcheck/sandcheck/targets/codex"      //
	_ "github.com/sandcheck/sandcheck/targets/command"    //
	_ "github.com/sandcheck/sandcheck/targets/firejail"   //
	_ "github.com/sandcheck/sandcheck/targets/srt"        // the first target
)

// trial is the scaffolding every scenario shares: a private directory and workspace, fixture
// hosts when the scenario needs a network, the faults, the target, and the cleanup of all of it.
type trial struct {
	cfg    Config
	target targets.Target
	dir    string // private to this trial; removed at the end
	ws     string // the sandboxed command's working directory
	marks  string // probe progress markers (inside the workspace)
	nonce  string
	inj    *faults.Injection
	change faults.Changes // what the faults change about every sandboxed run
	hosts  *nethost.Hosts
	undo   []func()
	// dropDAC runs the sandbox without root's file-permission override.
	dropDAC bool
	// setup says where and with which terminal sandboxed commands start.
	setup proc.Setup
	// acct is who the sandbox runs as (fixtures/users); env is its session's environment and
	// probeBin the probe binary as it can run it.
	acct     *users.Account
	env      []string
	probeBin string
	ledger   *users.Ledger
}

// trialOptions say what a scenario needs of the scaffolding.
type trialOptions struct {
	network bool     // start fixture hosts
	faults  []string // scenario-inherent faults, applied after the configured one
	// isolated starts the fixture with its bypass extras in a private host namespace, where the
	// sandbox then runs (nethost.Options.Isolated); names are extra fixture names.
	isolated bool
	names    []nethost.Name
}

func newTrial(ctx context.Context, cfg Config, opt trialOptions) (_ *trial, err error) {
	// t stays set on every path (a `return nil, err` would nil a named result before the
	// deferred cleanup reads it).
	t := &trial{cfg: cfg, nonce: randomHex(8)}
	defer phases.Time(phases.Fixture)()
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if t.target, err = NewTarget(cfg); err != nil {
		return nil, err
	}
	if t.acct, err = users.Resolve(cfg.User); err != nil {
		return nil, err
	}
	if t.ledger, err = t.acct.Begin(t.nonce); err != nil {
		return nil, err
	}
	if t.ledger != nil {
		reportSwept(t.ledger.Found)
	}
	t.undo = append(t.undo, func() { reportSwept(t.ledger.End()) })
	if t.dir, err = os.MkdirTemp(cfg.WorkDir, "sandcheck-trial-"); err != nil {
		return nil, fmt.Errorf("trial dir: %w", err)
	}
	if !cfg.Keep {
		dir := t.dir
		t.undo = append(t.undo, func() { os.RemoveAll(dir) })
	}
	if err := t.asUser(); err != nil {
		return nil, err
	}
	// srt needs an own working directory per concurrent run (it creates and removes placeholder
	// files there), so every trial gets a fresh workspace.
	t.ws = filepath.Join(t.dir, "workspace")
	t.marks = filepath.Join(t.ws, ".sandcheck")
	if err := os.MkdirAll(t.marks, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	t.inj = &faults.Injection{Dir: t.dir, MarkDir: t.marks, DenyRead: []string{secretDir(t.dir)}, ProbeBin: t.probeBin}
	if opt.network {
		hopt := nethost.Options{Dir: t.dir, OnHit: streamHit, Isolated: opt.isolated, Extras: opt.isolated, Names: opt.names}
		if t.hosts, err = nethost.Start(ctx, hopt); err != nil {
			return nil, fmt.Errorf("fixture hosts: %w", err)
		}
		t.undo = append(t.undo, func() { t.hosts.Close() })
		t.inj.Denied = t.addr(t.hosts.Denied)
		t.inj.Names = map[string]string{t.hosts.Allowed.Name: t.hosts.Allowed.IP.String(), t.hosts.Denied.Name: t.hosts.Denied.IP.String()}
		t.inj.Listen, t.inj.Dial, t.inj.Lookup = t.hosts.Listen, t.hosts.Dial, t.hosts.Lookup
		t.inj.Own = []netip.Addr{t.hosts.HostEnd}
		if t.hosts.Isolated() {
			t.setup.Start = t.hosts.Start
		}
	}
	for _, spec := range append([]string{cfg.Fault}, opt.faults...) {
		f, params, err := faults.Parse(spec)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		t.inj.Params = params
		if err := f.Apply(t.inj); err != nil {
			return nil, err
		}
	}
	t.undo = append(t.undo, t.inj.Cleanup)
	t.change = t.inj.Changes()
	return t, nil
}

// Close undoes everything, last first.
func (t *trial) Close() {
	defer phases.Time(phases.Cleanup)()
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// addr is how the probe and the policy name a fixture host: by name or by IP literal.
func (t *trial) addr(h nethost.Host) string {
	if t.cfg.Hostnames == "ip" {
		return h.IP.String()
	}
	return h.Name
}

// networkSpec is the probe spec that tries both fixture hosts over every channel.
func (t *trial) networkSpec() probe.Spec {
	h := t.hosts
	return probe.Spec{
		Hosts: []probe.Host{
			{Role: nethost.RoleAllowed, Addr: t.addr(h.Allowed), IP: h.Allowed.IP.String()},
			{Role: nethost.RoleDenied, Addr: t.addr(h.Denied), IP: h.Denied.IP.String()},
		},
		Channels:       model.AllChannels,
		CAFile:         h.CAFile,
		Resolver:       h.Resolver.String(),
		Timeout:        t.cfg.RequestTimeout(),
		MarkDir:        t.marks,
		SyncAfterFirst: t.change.SyncProbe,
	}
}

// session is the default sandboxed session: the probe under the policy "the allowed host, the
// workspace writable", with the faults' PATH and settings changes.
func (t *trial) session(specFile string) *targets.Session {
	s := &targets.Session{
		Dir:          t.dir,
		Workspace:    t.ws,
		Policy:       targets.Policy{WritablePaths: []string{t.ws}},
		Env:          append([]string{}, t.env...),
		UserSettings: t.cfg.Settings,
		Patches:      t.change.Patches,
	}
	if t.hosts != nil {
		s.Policy.AllowedHosts = append([]string{t.addr(t.hosts.Allowed)}, t.change.AllowedHosts...)
	}
	return s
}

// Exec is one sandboxed run of the probe.
type Exec struct {
	Settings json.RawMessage
	Nonce    string // the probe's nonce: its frame and every request it makes carry it
	Run      proc.Run
	Out      probe.Output
	ParseErr error
}

// exec writes the probe spec, lets mod adjust the session, and runs the probe under the target.
func (t *trial) exec(ctx context.Context, spec probe.Spec, mod func(*targets.Session), binds []proc.Bind) (*Exec, error) {
	if spec.Nonce == "" {
		spec.Nonce = t.nonce
	}
	specFile := filepath.Join(t.dir, "probe-"+randomHex(4)+".json")
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, fmt.Errorf("write probe spec: %w", err)
	}
	sess := t.session(specFile)
	sess.Command = []string{t.probeBin, probe.Arg, specFile}
	if mod != nil {
		mod(sess)
	}
	if t.change.PathOnly != "" {
		sess.Env = setPath(sess.Env, append(append([]string{}, t.change.PathFirst...), t.change.PathOnly))
	} else if len(t.change.PathFirst) > 0 {
		sess.Env = prependPath(sess.Env, t.change.PathFirst)
	}
	inv, err := t.target.Prepare(sess)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", t.target.Name(), err)
	}
	if inv.Agent != nil {
		// Finish is idempotent: on an error path below it only stops the agent.
		defer inv.Agent.Finish()
	}
	argv := inv.Argv
	if t.change.Wrap != nil {
		argv = t.change.Wrap(argv)
	}
	if t.hosts != nil && t.cfg.Hostnames == "name" {
		binds = append(binds, proc.Bind{Src: t.hosts.HostsFile, Dst: "/etc/hosts"}, proc.Bind{Src: t.hosts.ResolvConf, Dst: "/etc/resolv.conf"})
	}
	// Everything the sandbox reads or writes in the trial directory is its user's, as a user's
	// project is (the adapter has just written its settings there).
	if err := t.acct.Chown(t.dir, rootOwned); err != nil {
		return nil, err
	}
	drop := t.change.DropCaps
	if t.dropDAC {
		drop = append(append([]string{}, drop...), "dac_override", "dac_read_search")
	}
	// The switch to the sandbox's user comes last, inside the private mount namespace that only
	// root can set up (proc.RunCommandIn makes it, with the binds): the sandbox and everything under it
	// run as the user.
	argv = t.acct.Command(argv, drop)
	x := &Exec{Settings: json.RawMessage(inv.Settings)}
	if !json.Valid(x.Settings) {
		x.Settings, _ = json.Marshal(inv.Settings)
	}
	x.Nonce = spec.Nonce
	x.Run = proc.RunCommandIn(ctx, t.setup, argv, inv.Env, inv.Dir, spec.Nonce, t.cfg.RunTimeout(), t.cfg.KillGrace(), binds...)
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

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
