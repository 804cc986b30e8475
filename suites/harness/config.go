//go:build linux

package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
	"github.com/sandcheck/sandcheck/targets"
)

// Config selects what a trial runs against: the one typed configuration of a trial, built once
// (Use, from the trial command's flags over the environment; or FromEnv, under `go test` and
// `ginkgo`) and handed to every spec by Current, as the Kubernetes e2e framework hands its
// TestContext.
type Config struct {
	Target     string // SANDCHECK_TARGET, default srt
	TargetPath string // SANDCHECK_TARGET_PATH: the sandbox binary, when not found by default
	// TargetSettings is SANDCHECK_TARGET_SETTINGS: the matrix target's settings as one JSON
	// object. Strings are handed to the adapter as they are, any other value (a list) JSON-encoded.
	TargetSettings string
	Fault          string        // SANDCHECK_FAULT: NAME[:k=v,...], "" = healthy
	Settings       string        // SANDCHECK_SETTINGS: the user's own sandbox settings file
	Hostnames      string        // SANDCHECK_HOSTNAMES: "name" (fixture names via a private /etc/hosts) or "ip"
	Timeout        time.Duration // SANDCHECK_SANDBOX_TIMEOUT: deadline for one sandboxed run
	WorkDir        string        // SANDCHECK_WORKDIR: parent of trial directories
	Keep           bool          // SANDCHECK_KEEP=1 keeps the trial directory for debugging
	// User is SANDCHECK_USER: who the sandbox runs as, unprivileged (the default: the dedicated
	// account sandcheck creates), root, or an account's name (see fixtures/users).
	User string
	// Strict is SANDCHECK_STRICT=1: a known finding fails its spec instead of skipping it.
	Strict bool
	// Sessions is SANDCHECK_CONCURRENCY: how many concurrent sessions the concurrency scenario
	// starts (0: its own default).
	Sessions int
	// Deadline is when this process's trial budget (SANDCHECK_TRIAL_BUDGET, counted from the
	// process's start) runs out; zero when there is none. Every sandboxed run ends BudgetReserve
	// before it, so the trial can still tear down, classify and emit before the runner kills it.
	Deadline time.Time
}

// BudgetReserve is the time a trial keeps after its last sandboxed run, within its budget: to
// kill the run's processes, read the fixture logs, classify and emit the result.
const BudgetReserve = 1500 * time.Millisecond

// KillGrace is how long a timed-out run gets between SIGTERM and SIGKILL: under a budget, it
// must fit in BudgetReserve with the teardown and the classification.
func (c Config) KillGrace() time.Duration {
	if c.Deadline.IsZero() {
		return 2 * time.Second
	}
	return BudgetReserve / 2
}

// RequestTimeout is how long the probe gives one request (curl's --max-time): a tenth of the
// sandboxed run's deadline, at least 3 s. Where everything is slow (a VM under emulation, given
// a longer SANDCHECK_SANDBOX_TIMEOUT) a slow answer is not taken for a dead proxy.
func (c Config) RequestTimeout() time.Duration {
	return max(3*time.Second, c.Timeout/10)
}

// RunTimeout is the deadline for one sandboxed run: Timeout, cut to what is left of the trial
// budget less BudgetReserve. Zero or less means no time is left to run anything.
func (c Config) RunTimeout() time.Duration {
	d := c.Timeout
	if !c.Deadline.IsZero() {
		if left := time.Until(c.Deadline) - BudgetReserve; left < d {
			d = left
		}
	}
	return d
}

// Environment variable names, shared with `sandcheck trial` (config's trial settings).
const (
	EnvTarget     = config.Target
	EnvTargetPath = config.TargetPath
	EnvTargetSet  = config.TargetSettings
	EnvFault      = config.Fault
	EnvSettings   = config.Settings
	EnvHostnames  = config.Hostnames
	EnvTimeout    = config.SandboxTimeout
	EnvWorkDir    = config.WorkDir
	EnvKeep       = config.Keep
	EnvBudget     = config.TrialBudget // a duration: this process's whole budget, from its start
	EnvUser       = config.User
)

var current struct {
	sync.Mutex
	set bool
	cfg Config
	err error
}

// Use makes c the configuration every spec of this process reads (Current): what the trial
// command built from its flags over the environment. It checks c first.
func Use(c Config) error {
	if err := c.Check(); err != nil {
		return err
	}
	current.Lock()
	defer current.Unlock()
	current.set, current.cfg, current.err = true, c, nil
	return nil
}

// Current is this process's trial configuration: what Use was given, else (go test, ginkgo) the
// environment's, read once.
func Current() (Config, error) {
	current.Lock()
	defer current.Unlock()
	if !current.set {
		current.set = true
		current.cfg, current.err = FromEnv()
	}
	return current.cfg, current.err
}

// FromEnv reads the Config, with defaults.
func FromEnv() (Config, error) {
	env := config.Get()
	c := Config{
		Target:         or(env.Target, "srt"),
		TargetPath:     env.TargetPath,
		TargetSettings: env.TargetSettings,
		Fault:          env.Fault,
		Settings:       env.Settings,
		Hostnames:      or(env.Hostnames, "name"),
		Timeout:        30 * time.Second,
		WorkDir:        or(env.WorkDir, os.TempDir()),
		Keep:           env.Keep,
		User:           model.NormalizeUser(env.User),
		Strict:         env.Strict,
	}
	if v := env.Concurrency; v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 {
			return c, fmt.Errorf("%s=%q: want a number of sessions, at least 1", config.Concurrency, v)
		}
		c.Sessions = k
	}
	if v := env.SandboxTimeout; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive duration like 30s", EnvTimeout, v)
		}
		c.Timeout = d
	}
	if v := env.TrialBudget; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive duration like 25s", EnvBudget, v)
		}
		c.Deadline = phases.ProcessStart().Add(d)
	}
	return c, c.Check()
}

// Check validates a Config, naming the setting at fault.
func (c Config) Check() error {
	if err := model.CheckUser(c.User); err != nil {
		return fmt.Errorf("%s: %w", EnvUser, err)
	}
	if c.Hostnames != "name" && c.Hostnames != "ip" {
		return fmt.Errorf("%s=%q: want name or ip", EnvHostnames, c.Hostnames)
	}
	if _, err := c.AdapterSettings(); err != nil {
		return err
	}
	if c.Settings != "" {
		if _, err := os.Stat(c.Settings); err != nil {
			return fmt.Errorf("%s: %w", EnvSettings, err)
		}
	}
	return nil
}

// Env renders the Config as environment assignments (for child trial processes).
func (c Config) Env() []string {
	e := []string{EnvTarget + "=" + c.Target, EnvFault + "=" + c.Fault, EnvHostnames + "=" + c.Hostnames,
		EnvTimeout + "=" + c.Timeout.String(), EnvKeep + "=" + boolEnv(c.Keep), EnvUser + "=" + model.NormalizeUser(c.User)}
	if c.TargetPath != "" {
		e = append(e, EnvTargetPath+"="+c.TargetPath)
	}
	if c.TargetSettings != "" {
		e = append(e, EnvTargetSet+"="+c.TargetSettings)
	}
	if c.Settings != "" {
		e = append(e, EnvSettings+"="+c.Settings)
	}
	if c.WorkDir != "" {
		e = append(e, EnvWorkDir+"="+c.WorkDir)
	}
	if !c.Deadline.IsZero() {
		// What is left of this budget, for a child that starts now.
		e = append(e, EnvBudget+"="+max(time.Until(c.Deadline), time.Millisecond).Round(time.Millisecond).String())
	}
	return e
}

// AdapterSettings is what the target's factory receives: TargetSettings flattened to strings
// (lists and objects JSON-encoded), with TargetPath as "path" when given.
func (c Config) AdapterSettings() (map[string]string, error) {
	out := map[string]string{}
	if c.TargetSettings != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.TargetSettings), &m); err != nil {
			return nil, fmt.Errorf("%s: want one JSON object of the target's settings: %w", EnvTargetSet, err)
		}
		out = targets.FlattenSettings(m)
	}
	if c.TargetPath != "" {
		out["path"] = c.TargetPath
	}
	return out, nil
}

// NewTarget builds the target under test from the Config, as every trial does.
func NewTarget(c Config) (targets.Target, error) {
	s, err := c.AdapterSettings()
	if err != nil {
		return nil, err
	}
	return targets.New(c.Target, s)
}

func boolEnv(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// or is v, or def when v is empty.
func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
