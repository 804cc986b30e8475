//go:build linux

// Package network runs network trials: the probe (or a scenario's own command) under the target
// against the fixture hosts, with a scenario's variation, and the evidence classified by what the
// probe saw and what the fixture servers logged.
package network

import (
	"context"
	"encoding/json"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// Trial is the evidence of one network trial: everything needed to explain its outcome.
type Trial struct {
	harness.Subject
	Condition string          `json:"condition,omitempty"` // the scenario's own fault or setting
	Faults    []string        `json:"faults,omitempty"`    // the scenario's own faults, after the configured one
	Hostnames string          `json:"hostnames"`
	Allowed   nethost.Host    `json:"allowed"`
	Denied    nethost.Host    `json:"denied"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	harness.SandboxRun
	Nonce  string          `json:"nonce"`
	Hits   []model.Hit     `json:"fixture_hits"`
	Result classify.Result `json:"result"`
}

// Options vary a network trial for scenarios that probe the sandbox's own honesty.
type Options struct {
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

// open sets up a trial with fixture hosts as opt asks (faults, Setup, DropDAC) and
// returns the binds its sandboxed run gets. The caller closes the trial.
func open(ctx context.Context, cfg harness.Config, opt Options) (*harness.Trial, []proc.Bind, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{Network: true, Faults: opt.Faults})
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

// Run performs one network trial: fixture hosts up, faults applied, the probe run under
// the target, everything torn down, the observation classified.
func Run(ctx context.Context, cfg harness.Config) (*Trial, error) {
	return RunWith(ctx, cfg, Options{})
}

// RunWith is Run with a scenario's variation.
func RunWith(ctx context.Context, cfg harness.Config, opt Options) (*Trial, error) {
	t, binds, err := open(ctx, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	spec := Spec(t)
	x, err := t.Exec(ctx, spec, opt.Session, binds)
	if err != nil {
		return nil, err
	}
	nt := &Trial{
		Subject: t.Subject(), Condition: opt.Condition, Faults: opt.Faults,
		Hostnames: cfg.Hostnames, Allowed: t.Hosts.Allowed, Denied: t.Hosts.Denied, Settings: x.Settings,
		SandboxRun: x.SandboxRun(), Nonce: x.Nonce, Hits: t.Hosts.Hits(),
	}
	done := phases.Time(phases.Classify)
	nt.Result = classify.ClassifyNetwork(Input(t, x, spec, nt.Hits))
	done()
	return nt, nil
}

// Spec is the probe spec that tries both fixture hosts over every channel.
func Spec(t *harness.Trial) probe.Spec {
	h := t.Hosts
	return probe.Spec{
		Hosts: []probe.Host{
			{Role: model.RoleAllowed, Addr: t.Addr(h.Allowed), IP: h.Allowed.IP.String()},
			{Role: model.RoleDenied, Addr: t.Addr(h.Denied), IP: h.Denied.IP.String()},
		},
		Channels:       model.AllChannels,
		CAFile:         h.CAFile,
		Resolver:       h.Resolver.String(),
		Timeout:        t.Config.RequestTimeout(),
		MarkDir:        t.Marks,
		SyncAfterFirst: t.Change.SyncProbe,
	}
}

// Input is what the classifier reads of one sandboxed run: the probe's report and the
// fixture servers' log of the same run.
func Input(t *harness.Trial, x *harness.Exec, spec probe.Spec, hits []model.Hit) classify.Network {
	return classify.Network{
		Session:  x.Session(),
		Tokens:   map[string]string{model.RoleAllowed: t.Hosts.Allowed.Token, model.RoleDenied: t.Hosts.Denied.Token},
		Reach:    t.Target.Reach(),
		Channels: spec.Channels,
		Nonce:    x.Nonce,
		Hits:     hits,
	}
}
