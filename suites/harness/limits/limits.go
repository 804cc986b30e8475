//go:build linux

// Package limits runs the limits trial of the bypass family (information only): the command
// starts processes, takes memory and fills a writable path until something stops it, with the
// sandbox in a control group the trial owns (its task and memory ceilings) and the path on a
// tmpfs the trial mounts: whatever the sandbox does not limit, the host is never at risk, and
// the host's counters say which bound stopped the command.
package limits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/fixtures/cgroup"
	"github.com/sandcheck/sandcheck/model"
	verdict "github.com/sandcheck/sandcheck/suites/classify/limits"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
	probelimits "github.com/sandcheck/sandcheck/suites/probe/limits"
	"github.com/sandcheck/sandcheck/targets"
)

// TheBounds are the trial's bounds and the probe's caps. The caps stop an unlimited command
// before the control group's ceilings do, with room left under them for what the sandbox and an
// agent hold of their own (Claude Code's runtime ~150 MiB and ~30 tasks): measured to the
// ceilings, the kernel's OOM killer took Claude Code 2.1.283 with the memory child, and the
// session was lost. The ceilings are the host's bound all the same, whatever the probe does (a
// sandbox that runs its command in a group of its own escapes them, but not the caps).
var TheBounds = verdict.Bounds{
	Tasks: 256, MemoryMiB: 1024, TmpfsMiB: 128,
	Spec: probelimits.Spec{Processes: 128, MemoryMiB: 512, DiskMiB: 256},
}

// Trial is the evidence of one limits trial.
type Trial struct {
	harness.Subject
	Policy targets.Policy `json:"policy"`
	harness.SandboxRun
	Bounds   verdict.Bounds             `json:"bounds"`
	Counters cgroup.Stats               `json:"cgroup"`
	Result   map[string]verdict.Measure `json:"result"`
	// NotApplicable says why no measurement could be taken here ("" when they were).
	NotApplicable string `json:"not_applicable,omitempty"`
}

// Run performs one limits trial.
func Run(ctx context.Context, cfg harness.Config) (*Trial, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	lt := &Trial{Subject: t.Subject(), Bounds: TheBounds}
	g, err := cgroup.New(t.Nonce, cgroup.Limits{Tasks: TheBounds.Tasks, MemoryMiB: int64(TheBounds.MemoryMiB)})
	if err != nil {
		// Not the sandbox's doing, and nothing measured: without the bound the trial cannot
		// run the command unbounded on this host.
		lt.NotApplicable = "no control group the trial can own on this host: " + err.Error()
		return lt, nil
	}
	defer g.Close()
	ws := filepath.Join(t.Dir, "limits")
	fill := filepath.Join(ws, "fill")
	for _, d := range []string{ws, fill} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("limits layout: %w", err)
		}
	}
	spec := TheBounds.Spec
	spec.DiskPath = filepath.Join(fill, "data")
	lt.Policy = targets.Policy{WritablePaths: []string{ws}}
	noDisk := targets.Lacks(t.Target, model.CapWritablePaths)
	if noDisk != "" {
		spec.DiskMiB, spec.DiskPath, lt.Policy = 0, "", targets.Policy{}
	}
	lt.Bounds.Spec = spec
	t.Around = g.Wrap
	x, err := t.Exec(ctx, probe.Spec{Limits: &spec}, func(s *targets.Session) {
		s.Policy = lt.Policy
		s.Workspace = ws
	}, []proc.Bind{{Dst: fill, Tmpfs: fmt.Sprintf("%dm", TheBounds.TmpfsMiB)}})
	if err != nil {
		return nil, err
	}
	stats, statsErr := g.Stats()
	lt.SandboxRun, lt.Counters = x.SandboxRun(), stats
	lt.Result = verdict.Classify(verdict.Input{Session: x.Session(), Bounds: lt.Bounds,
		Counters: verdict.Counters{TasksRefused: stats.TasksRefused, OOMKills: stats.OOMKills, Err: statsErr}})
	if noDisk != "" {
		lt.Result[verdict.Disk] = verdict.Measure{Outcome: model.NotApplicable, Hint: "no path to fill: " + noDisk}
	}
	return lt, nil
}
