//go:build linux

package harness

import (
	"context"
	"encoding/json"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// NetworkTrial is the evidence of one network trial: everything needed to explain its outcome.
type NetworkTrial struct {
	Subject
	Condition   string             `json:"condition,omitempty"` // the scenario's own fault or setting
	Hostnames   string             `json:"hostnames"`
	Allowed     nethost.Host       `json:"allowed"`
	Denied      nethost.Host       `json:"denied"`
	Settings    json.RawMessage    `json:"settings,omitempty"`
	Run         proc.Run           `json:"run"`
	Ran         bool               `json:"sandbox_ran"`
	Observation *probe.Observation `json:"observation,omitempty"`
	ParseError  string             `json:"parse_error,omitempty"` // the probe's output could not be read or trusted
	Nonce       string             `json:"nonce"`
	Hits        []nethost.Hit      `json:"fixture_hits"`
	Result      classify.Result    `json:"result"`
}

// NetworkOptions vary a network trial for scenarios that probe the sandbox's own honesty.
type NetworkOptions struct {
	Condition string                 // a name for the variation, for the evidence
	Faults    []string               // scenario-inherent faults, after the configured one
	Session   func(*targets.Session) // changes to the session (settings file, HOME, env)
	Binds     []proc.Bind            // extra mounts in the sandbox's private mount namespace
	Setup     func(dir string) error // prepares files in the trial directory first
	BindsFn   func() []proc.Bind     // binds known only after Setup
	// DropDAC runs the sandbox without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so file modes
	// bind root as they bind everyone else (an unreadable settings file).
	DropDAC bool
}

// openNetworkTrial sets up a trial with fixture hosts as opt asks (faults, Setup, DropDAC) and
// returns the binds its sandboxed run gets. The caller closes the trial.
func openNetworkTrial(ctx context.Context, cfg Config, opt NetworkOptions) (*Trial, []proc.Bind, error) {
	t, err := Open(ctx, cfg, Options{Network: true, Faults: opt.Faults})
	if err != nil {
		return nil, nil, err
	}
	if opt.Setup != nil {
		if err := opt.Setup(t.Dir); err != nil {
			t.Close()
			return nil, nil, err
		}
	}
	binds := opt.Binds
	if opt.BindsFn != nil {
		binds = append(binds, opt.BindsFn()...)
	}
	t.DropDAC = opt.DropDAC
	return t, binds, nil
}

// RunNetwork performs one network trial: fixture hosts up, faults applied, the probe run under
// the target, everything torn down, the observation classified.
func RunNetwork(ctx context.Context, cfg Config) (*NetworkTrial, error) {
	return RunNetworkWith(ctx, cfg, NetworkOptions{})
}

// RunNetworkWith is RunNetwork with a scenario's variation.
func RunNetworkWith(ctx context.Context, cfg Config, opt NetworkOptions) (*NetworkTrial, error) {
	t, binds, err := openNetworkTrial(ctx, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	spec := t.networkSpec()
	x, err := t.Exec(ctx, spec, opt.Session, binds)
	if err != nil {
		return nil, err
	}
	nt := &NetworkTrial{
		Subject: t.Subject(), Condition: opt.Condition,
		Hostnames: cfg.Hostnames, Allowed: t.Hosts.Allowed, Denied: t.Hosts.Denied, Settings: x.Settings,
		Run: x.Run, Ran: x.Out.Ran, Observation: x.Out.Obs, Nonce: x.Nonce, Hits: t.Hosts.Hits(),
	}
	if x.ParseErr != nil {
		nt.ParseError = x.ParseErr.Error()
	}
	done := phases.Time(phases.Classify)
	nt.Result = classify.ClassifyNetwork(t.networkInput(x, spec, nt.Hits))
	done()
	return nt, nil
}

// networkInput is what the classifier reads of one sandboxed run: the probe's report and the
// fixture servers' log of the same run.
func (t *Trial) networkInput(x *Exec, spec probe.Spec, hits []nethost.Hit) classify.Network {
	return classify.Network{
		Ran: x.Out.Ran, Obs: x.Out.Obs, ParseErr: x.ParseErr, Exit: x.Run.Exit, Stderr: x.Run.Stderr, TimedOut: x.Run.TimedOut,
		Tokens:   map[string]string{nethost.RoleAllowed: t.Hosts.Allowed.Token, nethost.RoleDenied: t.Hosts.Denied.Token},
		Reach:    t.Target.Reach(),
		Channels: spec.Channels,
		Nonce:    x.Nonce,
		Hits:     hits,
	}
}
