package orchestrate

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
)

// Overrides are a command line's changes to a matrix: what is set wins over the file. Errors
// name the flag.
type Overrides struct {
	Targets        []string // --target NAME[@VERSION], repeatable; nil keeps the matrix's
	TargetSettings *string  // --target-settings: one JSON object, for the matrix's only target
	Faults         []string // --fault, repeatable, each its own cell
	Labels         *string  // --label-filter
	Trials         *int     // -n: fixed trials per cell (drops an adaptive rule)
	Parallel       *int     // -j
	Timeout        *time.Duration
	Users          []string // --user, over every host's user: list
}

// Apply lays the overrides over m.
func (o Overrides) Apply(m *matrix.Matrix) error {
	reg := Registry()
	if o.Targets != nil {
		ts, err := FlagTargets(o.Targets)
		if err != nil {
			return err
		}
		m.Targets = ts
	}
	if o.TargetSettings != nil {
		var ts map[string]any
		if err := json.Unmarshal([]byte(*o.TargetSettings), &ts); err != nil || ts == nil {
			return fmt.Errorf("--target-settings %q: want one JSON object of the target's settings (as in a matrix): %v", *o.TargetSettings, err)
		}
		if len(m.Targets) != 1 {
			return fmt.Errorf("--target-settings: the matrix has %d targets; say which with --target", len(m.Targets))
		}
		if err := reg.Target(m.Targets[0].Name, ts); err != nil {
			return fmt.Errorf("--target-settings: %w", err)
		}
		m.Targets[0].Settings, m.Targets[0].SettingsAt = ts, nil
	}
	if len(o.Faults) > 0 {
		m.Faults = nil
		for _, f := range o.Faults {
			if err := reg.Fault(f); err != nil {
				return fmt.Errorf("--fault: %w", err)
			}
			m.Faults = append(m.Faults, matrix.NormalizeFault(f))
		}
	}
	if o.Labels != nil {
		m.Scenarios = *o.Labels
	}
	if o.Trials != nil {
		if *o.Trials <= 0 {
			return fmt.Errorf("-n %d: want a positive number of trials", *o.Trials)
		}
		m.Trials, m.Adaptive = *o.Trials, nil
	}
	if o.Parallel != nil {
		if *o.Parallel <= 0 {
			return fmt.Errorf("-j %d: want a positive number", *o.Parallel)
		}
		m.Parallel = *o.Parallel
	}
	if o.Timeout != nil {
		if *o.Timeout <= 0 {
			return fmt.Errorf("--timeout %s: want a positive duration", *o.Timeout)
		}
		m.Timeout = *o.Timeout
	}
	return o.applyUsers(m)
}

// applyUsers lays --user over every host's user: list.
func (o Overrides) applyUsers(m *matrix.Matrix) error {
	if len(o.Users) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var us []string
	for _, u := range o.Users {
		u = strings.TrimSpace(u)
		if err := model.CheckUser(u); err != nil {
			return fmt.Errorf("--user: %w", err)
		}
		if !seen[u] {
			seen[u] = true
			us = append(us, u)
		}
	}
	for i := range m.Hosts {
		m.Hosts[i].Users = us
	}
	return nil
}
