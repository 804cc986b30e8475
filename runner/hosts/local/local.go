//go:build linux

// Package local is the local host kind: trials as child processes of the runner on this machine,
// each in a process group of its own that the runner tracks across its own kill -9
// (process.Executor).
package local

import (
	"context"
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/process"
)

// Kind is the matrix kind of the local host.
const Kind = matrix.KindLocal

func init() {
	hosts.Register(hosts.Kind{Name: Kind, NpmCache: true,
		New: func(h matrix.Host, o hosts.Options) (hosts.Host, error) { return New(h.Name, h.Users, o.Log), nil }})
}

// Host runs trials on this machine.
type Host struct {
	name  string
	users []string
	log   io.Writer
	exec  *process.Executor // its spare trial process is stopped on Close
}

// New returns the local host under the matrix name name ("local" if empty), whose trials run
// the sandbox as each of specs; cleanup notes go to log (nil: discarded).
func New(name string, specs []string, log io.Writer) *Host {
	if name == "" {
		name = "local"
	}
	if log == nil {
		log = io.Discard
	}
	return &Host{name: name, users: specs, log: log}
}

// Name implements hosts.Host.
func (l *Host) Name() string { return l.name }

// Isolation implements hosts.Host.
func (l *Host) Isolation() string { return "process group per trial" }

// Prepare implements hosts.Host: the runner's own binary serves; every account the sandbox runs
// as exists (the dedicated one is created), or the run stops before its first trial.
func (l *Host) Prepare(_ context.Context, bin string) (string, error) {
	for _, s := range l.users {
		if _, err := users.Resolve(s); err != nil {
			return "", err // the account is named; the runner names the host
		}
	}
	return bin, nil
}

// Executor implements hosts.Direct: each trial a process group of this runner, started ahead
// of its trial as a spare (process.Executor.Spare) while the one before it runs.
func (l *Host) Executor(tr hosts.Trials) runner.Executor {
	l.exec = &process.Executor{
		Command:       func(t runner.Trial, _ string) ([]string, []string, string) { return tr.Argv(t, tr.Binary), nil, "" },
		Parse:         tr.Parse,
		FramePrefixes: tr.Frames,
		Spare:         []string{tr.Binary, process.SpareArg},
	}
	return l.exec
}

// Close implements hosts.Host: it cleans up after the sandbox's users (what killed sandboxes
// left in the shared temporary directories, their processes): a trial killed at its deadline
// cannot clean up after its sandbox's user itself, and no later trial of the run may come to.
func (l *Host) Close() error {
	if l.exec != nil {
		l.exec.Close()
	}
	for _, s := range l.users {
		a, err := users.Resolve(s)
		if err != nil {
			continue
		}
		done, err := a.Sweep()
		if err != nil {
			fmt.Fprintf(l.log, "warning: cleanup after user %s: %v\n", a.Name, err)
		}
		for _, d := range done {
			fmt.Fprintf(l.log, "cleanup after user %s: %s\n", a.Name, d)
		}
	}
	l.users = nil // once
	return nil
}
