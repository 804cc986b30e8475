//go:build linux

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/fixtures/pty"
	"github.com/sandcheck/sandcheck/suites/classify/bypass"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// BypassTrial is the evidence of one bypass class's trial: every case's request, what the
// client saw, what the fixture servers logged, and the unsandboxed controls.
type BypassTrial struct {
	Target        string             `json:"target"`
	TargetVersion string             `json:"target_version"`
	Fault         string             `json:"fault,omitempty"`
	Class         string             `json:"class"` // the session: the classes it holds
	Policy        targets.Policy     `json:"policy"`
	Settings      json.RawMessage    `json:"settings,omitempty"`
	Allowed       nethost.Host       `json:"allowed"`
	Denied        nethost.Host       `json:"denied"`
	Extra         *nethost.Extras    `json:"extra,omitempty"`
	Names         []nethost.Name     `json:"names,omitempty"`
	Cases         []bypass.Case      `json:"cases"`
	Run           Run                `json:"run"`
	Ran           bool               `json:"sandbox_ran"`
	Observation   *probe.Observation `json:"observation,omitempty"`
	ParseError    string             `json:"parse_error,omitempty"`
	Nonce         string             `json:"nonce"`
	Hits          []nethost.Hit      `json:"fixture_hits"`
	// Unsandboxed is the control run of the requests that use no proxy, made first without the
	// sandbox, and what the fixture logged of it.
	Unsandboxed     *probe.Observation `json:"unsandboxed,omitempty"`
	UnsandboxedHits []nethost.Hit      `json:"unsandboxed_hits,omitempty"`
	// Injected is what the caller's terminal held after the sandboxed run (tty class).
	Injected string        `json:"injected,omitempty"`
	Result   bypass.Result `json:"result"`
}

// Bypass describes one bypass session (one or more classes sharing a policy): its fixture
// names, then, given the running fixture, the policy and the cases.
type Bypass struct {
	Class string // names the session in the evidence
	Names []nethost.Name
	Build func(f *nethost.Hosts, target targets.Target) (targets.Policy, []bypass.Case)
	// Session changes the sandboxed session further (a settings patch).
	Session func(*targets.Session)
	// TTY runs the sandbox (and the unsandboxed control) with a terminal of the fixture's as its
	// stdin and controlling terminal.
	TTY bool
}

// RunBypass performs one bypass trial: the fixture in a private host namespace, the requests
// that use no proxy first made without the sandbox (positive controls), then every request under
// the target, everything torn down, every case classified.
func RunBypass(ctx context.Context, cfg Config, b Bypass) (*BypassTrial, error) {
	t, err := newTrial(ctx, cfg, trialOptions{network: true, isolated: true, names: b.Names})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	policy, cases := b.Build(t.hosts, t.target)
	policy.AllowedHosts = append(policy.AllowedHosts, t.inj.ExtraAllowed...)
	bt := &BypassTrial{Target: t.target.Name(), TargetVersion: t.target.Version(), Fault: cfg.Fault, Class: b.Class,
		Policy: policy, Allowed: t.hosts.Allowed, Denied: t.hosts.Denied, Extra: t.hosts.Extra, Names: t.hosts.Names(), Cases: cases, Nonce: t.nonce}
	var term *pty.PTY
	if b.TTY {
		if term, err = pty.Open(); err != nil {
			return nil, err
		}
		defer term.Close()
		t.setup.tty = term.Slave
	}
	denyAll := targets.DenyAll(t.target)
	var send, direct []crafted.Request
	for _, c := range cases {
		if c.NotApplicable != "" || denyAll && bypass.ViaProxy(c.Raw.Via) {
			continue
		}
		send = append(send, c.Raw)
		if !bypass.ViaProxy(c.Raw.Via) {
			direct = append(direct, c.Raw)
		}
	}
	var unsandboxed map[string]crafted.Result
	if len(direct) > 0 {
		if unsandboxed, err = t.unsandboxedRaw(ctx, bt, direct, term); err != nil {
			return nil, err
		}
	}
	spec := probe.Spec{Raw: send, Timeout: t.cfg.RequestTimeout(), Nonce: t.nonce}
	var binds []Bind
	if t.cfg.Hostnames != "name" {
		// The cases are about names: they resolve through the fixture whatever the mode.
		binds = []Bind{{Src: t.hosts.HostsFile, Dst: "/etc/hosts"}, {Src: t.hosts.ResolvConf, Dst: "/etc/resolv.conf"}}
	}
	tmp := filepath.Join(t.dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("trial tmp: %w", err)
	}
	x, err := t.exec(ctx, spec, func(s *targets.Session) {
		// The sandbox's host-side files (srt's socket per process id in $TMPDIR) in the trial's
		// own directory: a stale one another run left in /tmp under a reused process id made
		// srt refuse to start (EADDRINUSE), which is no bypass case's business.
		s.Env = targets.SetEnv(s.Env, "TMPDIR", tmp)
		s.Policy.AllowedHosts = policy.AllowedHosts
		s.Policy.DeniedHosts = policy.DeniedHosts
		if b.Session != nil {
			b.Session(s)
		}
	}, binds)
	if err != nil {
		return nil, err
	}
	bt.Settings, bt.Run, bt.Ran, bt.Observation, bt.Hits = x.Settings, x.Run, x.Out.Ran, x.Out.Obs, t.hosts.Hits()
	if x.ParseErr != nil {
		bt.ParseError = x.ParseErr.Error()
	}
	if term != nil {
		in, _ := term.Injected()
		bt.Injected = string(in)
	}
	tokens := map[string]string{nethost.RoleAllowed: t.hosts.Allowed.Token, nethost.RoleDenied: t.hosts.Denied.Token}
	if e := t.hosts.Extra; e != nil {
		for _, h := range []nethost.Host{e.Loopback, e.Metadata, e.Self, e.Unix} {
			tokens[h.Role] = h.Token
		}
	}
	done := timePhase(PhaseClassify)
	bt.Result = bypass.Classify(bypass.Input{
		Ran: x.Out.Ran, Obs: x.Out.Obs, ParseErr: x.ParseErr, Exit: x.Run.Exit, Stderr: x.Run.Stderr, TimedOut: x.Run.TimedOut,
		Nonce: t.nonce, Tokens: tokens, Cases: cases, Hits: bt.Hits, DenyAll: denyAll,
		Unsandboxed: unsandboxed, UnsandboxedHits: bt.UnsandboxedHits, Injected: bt.Injected,
	})
	done()
	return bt, nil
}

// unsandboxedRaw makes the requests that use no proxy as the sandbox's user, without the sandbox,
// from the same host namespace: what gets through here proves the fixture sees it, so a refusal
// inside the sandbox is the sandbox's. The fixture keeps these hits apart (nethost.Control).
func (t *trial) unsandboxedRaw(ctx context.Context, bt *BypassTrial, raws []crafted.Request, term *pty.PTY) (map[string]crafted.Result, error) {
	spec := probe.Spec{Nonce: t.nonce, Raw: raws, Timeout: t.cfg.RequestTimeout()}
	specFile, err := t.writeSpec(spec, "probe-unsandboxed-")
	if err != nil {
		return nil, err
	}
	if err := t.acct.Chown(t.dir, rootOwned); err != nil {
		return nil, err
	}
	var run Run
	hits, err := t.hosts.Control(func() error {
		argv := t.acct.Command([]string{t.probeBin, probe.Arg, specFile}, nil)
		run = runCommandIn(ctx, t.setup, argv, t.env, t.ws, t.nonce, t.cfg.RunTimeout(), t.cfg.KillGrace())
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := probe.Parse(run.Stdout, t.nonce)
	if err == nil && out.Obs == nil {
		err = fmt.Errorf("no observation")
	}
	if err != nil {
		return nil, fmt.Errorf("unsandboxed control as %s (exit %d, %s): %w", t.acct, run.Exit, strings.TrimSpace(run.Stderr), err)
	}
	bt.Unsandboxed, bt.UnsandboxedHits = out.Obs, hits
	res := map[string]crafted.Result{}
	for _, r := range out.Obs.Raw {
		if r.Via == crafted.ViaTIOCSTI && term != nil {
			// Only what reached this terminal counts; then the queue is emptied for the real run.
			in, _ := term.Injected()
			if !strings.Contains(string(in), crafted.Payload(t.nonce, r.ID)) {
				r.Connected = false
				r.Err = firstNonEmpty(r.Err, "the input did not reach the caller's terminal")
			}
		}
		res[r.ID] = r
	}
	return res, nil
}

// writeSpec writes a probe spec into the trial directory.
func (t *trial) writeSpec(spec probe.Spec, prefix string) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	f := filepath.Join(t.dir, prefix+randomHex(4)+".json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return "", fmt.Errorf("write probe spec: %w", err)
	}
	return f, nil
}
