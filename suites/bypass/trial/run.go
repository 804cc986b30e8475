//go:build linux

// Package trial is the bypass family's trial: the fixture with its extra hosts in a private host
// namespace, the requests that use no proxy first made without the sandbox (positive controls),
// then every case's request under the target (run.go), each case classified by what the client
// saw and what the fixture logged (classify.go).
package trial

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/fixtures/pty"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// Trial is the evidence of one bypass class's trial: every case's request, what the
// client saw, what the fixture servers logged, and the unsandboxed controls.
type Trial struct {
	harness.Subject
	Class    string          `json:"class"` // the session: the classes it holds
	Policy   targets.Policy  `json:"policy"`
	Settings json.RawMessage `json:"settings,omitempty"`
	Allowed  nethost.Host    `json:"allowed"`
	Denied   nethost.Host    `json:"denied"`
	Extra    *nethost.Extras `json:"extra,omitempty"`
	Names    []nethost.Name  `json:"names,omitempty"`
	// Canaries are the secrets planted in the session (their values are the nonce's): what a
	// case's carry sources read, by name (a reproducer plants its own).
	Canaries []Canary `json:"canaries,omitempty"`
	Cases    []Case   `json:"cases"`
	harness.SandboxRun
	Nonce string      `json:"nonce"`
	Hits  []model.Hit `json:"fixture_hits"`
	// Unsandboxed is the control run of the requests that use no proxy, made first without the
	// sandbox, and what the fixture logged of it.
	Unsandboxed     *probe.Observation `json:"unsandboxed,omitempty"`
	UnsandboxedHits []model.Hit        `json:"unsandboxed_hits,omitempty"`
	// Injected is what the caller's terminal held after the sandboxed run (tty class).
	Injected string `json:"injected,omitempty"`
	Result   Result `json:"result"`
}

// Plan describes one bypass session (one or more classes sharing a policy): its fixture
// names, then, given the running fixture, the policy and the cases.
type Plan struct {
	Class string // names the session in the evidence
	Names []nethost.Name
	Build func(f *nethost.Hosts, target targets.Target) (targets.Policy, []Case)
	// Session changes the sandboxed session further (a settings patch).
	Session func(*targets.Session)
	// TTY runs the sandbox (and the unsandboxed control) with a terminal of the fixture's as its
	// stdin and controlling terminal.
	TTY bool
	// Canaries are secrets planted in the session, which the fixture watches for.
	Canaries []Canary
	// Parent stands up a parent proxy and gives it to the sandbox (targets.Policy.ParentProxy):
	// an open proxy on the isolated host's loopback that logs what it is asked for
	// (model.RoleParent) and forwards it from there.
	Parent bool
}

// Run performs one bypass trial: the fixture in a private host namespace, the requests
// that use no proxy first made without the sandbox (positive controls), then every request under
// the target, everything torn down, every case classified.
func Run(ctx context.Context, cfg harness.Config, b Plan) (*Trial, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{Network: true, Isolated: true, Names: b.Names})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	policy, cases := b.Build(t.Hosts, t.Target)
	for i, c := range cases {
		if c.Raw.Tamper == crafted.TamperBridge && t.Hosts.Extra != nil {
			// The sandbox keeps its bridge sockets in the session's TMPDIR; the host socket
			// is the fixture's (a docker.sock's stand-in).
			cases[i].Raw.Swap, cases[i].Raw.SwapTo = t.Tmp, t.Hosts.Extra.UnixPath
		}
	}
	signals := watchSignals(t, cases)
	defer signals.stop()
	policy.AllowedHosts = append(policy.AllowedHosts, t.Change.AllowedHosts...)
	if b.Parent {
		var closeParent func()
		if policy.ParentProxy, closeParent, err = startParent(t); err != nil {
			return nil, err
		}
		defer closeParent()
	}
	bt := &Trial{Subject: t.Subject(), Class: b.Class,
		Policy: policy, Allowed: t.Hosts.Allowed, Denied: t.Hosts.Denied, Extra: t.Hosts.Extra, Names: t.Hosts.Names(), Canaries: b.Canaries, Cases: cases, Nonce: t.Nonce}
	var term *pty.PTY
	if b.TTY {
		if term, err = pty.Open(); err != nil {
			return nil, err
		}
		defer term.Close()
		t.Setup.TTY = term.Slave
	}
	denyAll := targets.DenyAll(t.Target)
	var send, direct []crafted.Request
	for _, c := range cases {
		if c.NotApplicable != "" || denyAll && ViaProxy(c.Raw.Via) {
			continue
		}
		send = append(send, c.Raw)
		if !ViaProxy(c.Raw.Via) {
			direct = append(direct, c.Raw)
		}
	}
	var unsandboxed map[string]crafted.Result
	if len(direct) > 0 {
		if err := signals.start(); err != nil {
			return nil, err
		}
		if unsandboxed, err = unsandboxedRaw(ctx, t, bt, direct, term, signals.stop); err != nil {
			return nil, err
		}
	}
	if err := signals.start(); err != nil { // fresh ones for the sandbox
		return nil, err
	}
	if len(b.Canaries) > 0 {
		t.Hosts.WatchFor(canaryValues(b.Canaries, t.Nonce))
	}
	spec := probe.Spec{Raw: send, Timeout: t.Config.RequestTimeout(), Nonce: t.Nonce}
	var binds []proc.Bind
	if t.Config.Hostnames != "name" {
		// The cases are about names: they resolve through the fixture whatever the mode.
		binds = []proc.Bind{{Src: t.Hosts.HostsFile, Dst: "/etc/hosts"}, {Src: t.Hosts.ResolvConf, Dst: "/etc/resolv.conf"}}
	}
	var planted error
	x, err := t.Exec(ctx, spec, func(s *targets.Session) {
		// The session's network policy is the class's, whole; its paths stay the trial's.
		s.Policy.AllowedHosts, s.Policy.DeniedHosts = policy.AllowedHosts, policy.DeniedHosts
		s.Policy.ReadOnlyMethods, s.Policy.RefusePrivate = policy.ReadOnlyMethods, policy.RefusePrivate
		s.Policy.Credentials, s.Policy.ParentProxy = policy.Credentials, policy.ParentProxy
		planted = plant(s, b.Canaries, t.Nonce)
		if speaksTLS(cases) {
			// The sandbox's host trusts the fixture's CA as it would a real site's: a proxy that
			// intercepts TLS (Codex's, under reading methods only) then reaches the fixture host.
			s.Env = targets.SetEnv(s.Env, "SSL_CERT_FILE", t.Hosts.CAFile)
		}
		if b.Session != nil {
			b.Session(s)
		}
	}, binds)
	if err != nil {
		return nil, err
	}
	if planted != nil {
		return nil, planted
	}
	signals.stop() // a sentinel the command killed is on record
	bt.Settings, bt.SandboxRun, bt.Hits = x.Settings, x.SandboxRun(), t.Hosts.Hits()
	if term != nil {
		in, _ := term.Injected()
		bt.Injected = string(in)
	}
	tokens := map[string]string{model.RoleAllowed: t.Hosts.Allowed.Token, model.RoleDenied: t.Hosts.Denied.Token}
	if e := t.Hosts.Extra; e != nil {
		for _, h := range []nethost.Host{e.Loopback, e.Metadata, e.Self, e.Unix} {
			tokens[h.Role] = h.Token
		}
	}
	done := phases.Time(phases.Classify)
	bt.Result = Classify(Input{
		Session: x.Session(),
		Nonce:   t.Nonce, Tokens: tokens, Cases: cases, Hits: bt.Hits, DenyAll: denyAll,
		Unsandboxed: unsandboxed, UnsandboxedHits: bt.UnsandboxedHits, Injected: bt.Injected,
	})
	done()
	return bt, nil
}

// speaksTLS says whether any request of the trial speaks TLS inside its tunnel.
func speaksTLS(cases []Case) bool {
	for _, c := range cases {
		if c.Raw.TLSName != "" {
			return true
		}
	}
	return false
}

// unsandboxedRaw makes the requests that use no proxy as the sandbox's user, without the sandbox,
// from the same host namespace: what gets through here proves the fixture sees it, so a refusal
// inside the sandbox is the sandbox's. The fixture keeps these hits apart (nethost.Control),
// settle's too: it runs at the control's end.
func unsandboxedRaw(ctx context.Context, t *harness.Trial, bt *Trial, raws []crafted.Request, term *pty.PTY, settle func()) (map[string]crafted.Result, error) {
	spec := probe.Spec{Nonce: t.Nonce, Raw: raws, Timeout: t.Config.RequestTimeout()}
	specFile, err := t.WriteSpec(spec, "probe-unsandboxed-")
	if err != nil {
		return nil, err
	}
	if err := t.Account.Chown(t.Dir, harness.RootOwned); err != nil {
		return nil, err
	}
	var run proc.Run
	hits, err := t.Hosts.Control(func() error {
		argv := t.Account.Command([]string{t.ProbeBin, probe.Arg, specFile}, nil)
		run = proc.RunCommandIn(ctx, t.Setup, argv, t.Env, t.Workspace, t.Nonce, t.Config.RunTimeout(), t.Config.KillGrace())
		settle() // what the control did to the sentinels is its, on its record
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := probe.Parse(run.Stdout, t.Nonce)
	if err == nil && out.Obs == nil {
		err = fmt.Errorf("no observation")
	}
	if err != nil {
		return nil, fmt.Errorf("unsandboxed control as %s (exit %d, %s): %w", t.Account, run.Exit, strings.TrimSpace(run.Stderr), err)
	}
	bt.Unsandboxed, bt.UnsandboxedHits = out.Obs, hits
	res := map[string]crafted.Result{}
	for _, r := range out.Obs.Raw {
		if r.Via == crafted.ViaTIOCSTI && term != nil {
			// Only what reached this terminal counts; then the queue is emptied for the real run.
			in, _ := term.Injected()
			if !strings.Contains(string(in), crafted.Payload(t.Nonce, r.ID)) {
				r.Connected = false
				r.Err = cmp.Or(r.Err, "the input did not reach the caller's terminal")
			}
		}
		res[r.ID] = r
	}
	return res, nil
}
