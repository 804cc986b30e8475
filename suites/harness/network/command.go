//go:build linux

package network

import (
	"context"
	"encoding/json"

	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
)

// Hosts is how a command addresses the trial's fixture hosts.
type Hosts struct {
	Allowed, Denied string // names (or IP literals with hostnames=ip)
	CAFile          string // the fixtures' throwaway CA, for https
}

// CommandTrial is one run of a scenario's own shell command (not the probe) under the target,
// with fixture hosts: a reproduction written as its reporter wrote it. The fixture servers' log is
// the evidence of what left; the command's output is what its reporter would have seen.
type CommandTrial struct {
	harness.Subject
	Condition string          `json:"condition,omitempty"`
	Faults    []string        `json:"faults,omitempty"` // the scenario's own faults, after the configured one
	Allowed   nethost.Host    `json:"allowed"`
	Denied    nethost.Host    `json:"denied"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	Command   string          `json:"command"`
	Run       proc.Run        `json:"run"`
	harness.Given
	Output string      `json:"output"` // the command's stdout as it came back
	Nonce  string      `json:"nonce"`
	Hits   []model.Hit `json:"fixture_hits"`
}

// RunCommand runs `sh -c SCRIPT` under the target, where script is built from the trial's
// fixture hosts, with opt's variation (session changes, faults, binds) as a network trial has.
func RunCommand(ctx context.Context, cfg harness.Config, opt Options, script func(Hosts) string) (*CommandTrial, error) {
	t, binds, err := open(ctx, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	cmd := script(Hosts{Allowed: t.Addr(t.Hosts.Allowed), Denied: t.Addr(t.Hosts.Denied), CAFile: t.Hosts.CAFile})
	x, err := t.Exec(ctx, probe.Spec{}, func(s *targets.Session) {
		if opt.Session != nil {
			opt.Session(s)
		}
		s.Command = []string{"sh", "-c", cmd}
	}, binds)
	if err != nil {
		return nil, err
	}
	return &CommandTrial{
		Subject: t.Subject(), Condition: opt.Condition, Faults: opt.Faults,
		Allowed: t.Hosts.Allowed, Denied: t.Hosts.Denied, Settings: x.Settings, Command: cmd,
		Run: x.Run, Given: x.Given, Output: string(x.Run.Stdout), Nonce: x.Nonce, Hits: t.Hosts.Hits(),
	}, nil
}
