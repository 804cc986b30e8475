package orchestrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/orchestrate/reachcheck"
	"github.com/sandcheck/sandcheck/runner/trialresult"
)

// Trial is what every trial of a run is handed besides its cell.
type Trial struct {
	Hostnames  string // name (fixture names via a private /etc/hosts) or ip
	Settings   string // the user's own sandbox settings file
	TargetPath string // one executable for every target (--target-path)
	// VersionPaths maps "TARGET-ID@VERSION" to the executable of that installed version
	// (InstallVersions): what each versioned cell's trial is handed as --target-path.
	VersionPaths map[string]string
}

// TrialArgv is the process of one trial on its host: sandcheck's `trial` command, emitting its
// verdict on stdout. The first trial of a cell also fingerprints the host.
func TrialArgv(bin string, m *matrix.Matrix, t runner.Trial, o *Trial) []string {
	c := t.Cell
	target := targetName(m, c.Target)
	versionPath := ""
	if c.Version != "" {
		// The installed version's executable (InstallVersions); failing that, the trial
		// resolves and installs NAME@VERSION itself, never silently running another build.
		if versionPath = o.VersionPaths[c.Target+"@"+c.Version]; versionPath == "" {
			target += "@" + c.Version
		}
	}
	argv := []string{bin, "trial", "--emit", "--target", target, "--fault", c.Fault,
		"--label-filter", c.Labels, "--hostnames", o.Hostnames, "--user", model.RecordedUser(c.User)}
	if t.Index == 0 {
		argv = append(argv, "--fingerprint")
	}
	if t.Budget > 0 {
		argv = append(argv, "--budget", t.Budget.String())
	}
	if t, ok := m.Target(c.Target); ok {
		if len(t.Settings) > 0 {
			b, _ := json.Marshal(t.Settings)
			argv = append(argv, "--target-settings", string(b))
		}
		if p, ok := t.Settings["path"].(string); ok && p != "" {
			argv = append(argv, "--target-path", p)
		}
		if s, ok := t.Settings["settings_file"].(string); ok && s != "" {
			argv = append(argv, "--settings", s)
		}
	}
	if o.Settings != "" {
		argv = append(argv, "--settings", o.Settings)
	}
	if o.TargetPath != "" {
		argv = append(argv, "--target-path", o.TargetPath)
	}
	if versionPath != "" {
		argv = append(argv, "--target-path", versionPath) // last, so it wins
	}
	return argv
}

func targetName(m *matrix.Matrix, id string) string {
	if t, ok := m.Target(id); ok {
		return t.Name
	}
	return id
}

// Executors prepares every host of the matrix and returns one executor dispatching each trial
// to its cell's host, and the function that closes the hosts (once, however often called).
// self is this binary, which hosts copy or run; notes go to log.
func Executors(ctx context.Context, m *matrix.Matrix, self string, o *Trial, log io.Writer) (runner.Executor, func(), error) {
	byHost := map[string]runner.Executor{}
	var opened []hosts.Host
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			for _, h := range opened {
				if err := h.Close(); err != nil {
					fmt.Fprintf(log, "warning: closing host %s: %v\n", h.Name(), err)
				}
			}
		})
	}
	// The local hosts' trials inherit this process's PATH: a shim there their sandbox's user
	// cannot reach refuses the run before any host is prepared.
	if err := reachcheck.Matrix(m, o.TargetPath, o.VersionPaths, os.Getenv("PATH"), log); err != nil {
		return nil, closeAll, err
	}
	for _, mh := range m.Hosts {
		h, err := hosts.New(mh, hosts.Options{Log: log})
		if err != nil {
			return nil, closeAll, err
		}
		opened = append(opened, h)
		bin, err := h.Prepare(ctx, self)
		if err != nil {
			return nil, closeAll, fmt.Errorf("prepare host %s: %w", mh.Name, err)
		}
		e, err := hosts.NewExecutor(h, TrialsOn(bin, m, o))
		if err != nil {
			return nil, closeAll, err
		}
		byHost[mh.Name] = e
	}
	return runner.ExecutorFunc(func(ctx context.Context, t runner.Trial) model.Record {
		return byHost[t.Cell.Host].Run(ctx, t)
	}), closeAll, nil
}

// TrialsOn is how a host whose sandcheck is bin runs the matrix's trials.
func TrialsOn(bin string, m *matrix.Matrix, o *Trial) hosts.Trials {
	return hosts.Trials{Binary: bin,
		Argv:   func(t runner.Trial, bin string) []string { return TrialArgv(bin, m, t, o) },
		Parse:  trialresult.Parse,
		Frames: trialresult.Prefixes}
}

// Stoppers is the matrix's adaptive stop rule (trials: {until: ...}) as the runner's, nil when
// it has none.
func Stoppers(m *matrix.Matrix) func(model.Cell) runner.Stopper {
	a := m.Adaptive
	if a == nil {
		return nil
	}
	h := stats.Hypotheses{P0: a.P0, P1: a.P1}
	return func(model.Cell) runner.Stopper {
		s, _ := stats.NewSPRT(h, a.Alpha, a.Beta, a.Max)
		return sprtStopper{s}
	}
}

type sprtStopper struct{ s *stats.SPRT }

func (s sprtStopper) Observe(pass bool) bool {
	if s.s == nil {
		return false
	}
	return s.s.Step(!pass) != stats.Continue
}
