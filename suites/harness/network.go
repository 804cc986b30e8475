package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/probe"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/srt" // the first target
)

// NetworkTrial is the evidence of one network trial: everything needed to explain its outcome.
type NetworkTrial struct {
	Target        string             `json:"target"`
	TargetVersion string             `json:"target_version"`
	Fault         string             `json:"fault,omitempty"`
	Hostnames     string             `json:"hostnames"`
	Allowed       nethost.Host       `json:"allowed"`
	Denied        nethost.Host       `json:"denied"`
	Settings      json.RawMessage    `json:"settings,omitempty"`
	Run           Run                `json:"run"`
	Ran           bool               `json:"sandbox_ran"`
	Observation   *probe.Observation `json:"observation,omitempty"`
	Hits          []nethost.Hit      `json:"fixture_hits"`
	Result        classify.Result    `json:"result"`
}

// RunNetwork performs one network trial: fixture hosts up, fault applied, the probe run under
// the target, everything torn down, the observation classified.
func RunNetwork(ctx context.Context, cfg Config) (*NetworkTrial, error) {
	t, err := targets.New(cfg.Target, map[string]string{"path": cfg.TargetPath})
	if err != nil {
		return nil, err
	}
	fault, params, err := faults.Parse(cfg.Fault)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.WorkDir, "sandcheck-trial-")
	if err != nil {
		return nil, fmt.Errorf("trial dir: %w", err)
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	// srt needs an own working directory per concurrent run (it creates and removes placeholder
	// files there), so every trial gets a fresh workspace.
	ws := filepath.Join(dir, "workspace")
	marks := filepath.Join(ws, ".sandcheck")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}

	hosts, err := nethost.Start(ctx, nethost.Options{Dir: dir})
	if err != nil {
		return nil, fmt.Errorf("fixture hosts: %w", err)
	}
	defer hosts.Close()

	addr := func(h nethost.Host) string {
		if cfg.Hostnames == "ip" {
			return h.IP.String()
		}
		return h.Name
	}
	inj := &faults.Injection{Dir: dir, MarkDir: marks, Params: params, Denied: addr(hosts.Denied),
		Names: map[string]string{hosts.Allowed.Name: hosts.Allowed.IP.String(), hosts.Denied.Name: hosts.Denied.IP.String()}}
	if fault != nil {
		if err := fault.Apply(inj); err != nil {
			return nil, err
		}
		defer inj.Cleanup()
	}

	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate probe binary: %w", err)
	}
	nonce := randomHex(8)
	spec := probe.Spec{
		Nonce: nonce,
		Hosts: []probe.Host{
			{Role: nethost.RoleAllowed, Addr: addr(hosts.Allowed), IP: hosts.Allowed.IP.String()},
			{Role: nethost.RoleDenied, Addr: addr(hosts.Denied), IP: hosts.Denied.IP.String()},
		},
		Channels:       probe.AllChannels,
		CAFile:         hosts.CAFile,
		Resolver:       hosts.Resolver.String(),
		Timeout:        3 * time.Second,
		MarkDir:        marks,
		SyncAfterFirst: inj.SyncProbe,
	}
	specFile := filepath.Join(dir, "probe.json")
	if b, err := json.Marshal(spec); err != nil {
		return nil, err
	} else if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, fmt.Errorf("write probe spec: %w", err)
	}

	env := os.Environ()
	if len(inj.PathDirs) > 0 {
		env = prependPath(env, inj.PathDirs)
	}
	sess := &targets.Session{
		Dir:       dir,
		Workspace: ws,
		Policy: targets.Policy{
			AllowedHosts:  append([]string{addr(hosts.Allowed)}, inj.ExtraAllowed...),
			WritablePaths: []string{ws},
		},
		Command:      []string{self, probe.Arg, specFile},
		Env:          env,
		UserSettings: cfg.Settings,
		Patches:      inj.Patches,
	}
	inv, err := t.Prepare(sess)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", t.Name(), err)
	}
	argv := inv.Argv
	if cfg.Hostnames == "name" {
		argv = hosts.WrapNames(argv)
	}

	run := runCommand(ctx, argv, inv.Env, inv.Dir, nonce, cfg.Timeout)
	out, perr := probe.Parse(run.Stdout, nonce)

	nt := &NetworkTrial{
		Target: t.Name(), TargetVersion: t.Version(), Fault: cfg.Fault, Hostnames: cfg.Hostnames,
		Allowed: hosts.Allowed, Denied: hosts.Denied, Settings: json.RawMessage(inv.Settings),
		Run: run, Ran: out.Ran, Observation: out.Obs, Hits: hosts.Hits(),
	}
	var deniedHits []string
	for _, h := range nt.Hits {
		if h.Role == nethost.RoleDenied {
			deniedHits = append(deniedHits, h.Proto+" "+h.Path)
		}
	}
	in := classify.Network{
		Ran: out.Ran, Obs: out.Obs, Exit: run.Exit, Stderr: run.Stderr, TimedOut: run.TimedOut,
		Tokens:     map[string]string{nethost.RoleAllowed: hosts.Allowed.Token, nethost.RoleDenied: hosts.Denied.Token},
		Reach:      t.Reach(),
		DeniedHits: deniedHits,
	}
	nt.Result = classify.ClassifyNetwork(in)
	if perr != nil && nt.Result.Outcome == classify.HarnessError {
		nt.Result.Hint += "; " + perr.Error()
	}
	return nt, nil
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
