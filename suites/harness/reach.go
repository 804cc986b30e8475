//go:build linux

package harness

import (
	"fmt"
	"os"
	"sync"

	"github.com/sandcheck/sandcheck/fixtures/reach"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/targets"
)

// ProgramOf is the program a trial of cfg starts, named as cfg's flags name it: --target-path
// (also how the runner hands every trial a matrix target's settings.path), --target-settings
// path, else the adapter's own find.
func ProgramOf(cfg Config, t targets.Target) reach.Program {
	s, ok := t.(targets.Starter)
	if !ok {
		return reach.Program{}
	}
	p := reach.Program{Path: s.Starts()}
	adapter, _ := cfg.AdapterSettings()
	switch {
	case cfg.TargetPath != "":
		p.What = "--target-path"
	case adapter["path"] != "":
		p.What = "--target-settings path"
	}
	return p
}

// CallerReach is reach.Check for cfg's sandbox user and target on this process's PATH: what the
// caller hands the sandbox that its user cannot reach. It is empty when the account or the
// target cannot be had: the trial says why.
func CallerReach(cfg Config) reach.Reach {
	acct, err := users.Resolve(cfg.User)
	if err != nil {
		return reach.Reach{}
	}
	t, err := NewTarget(cfg)
	if err != nil {
		return reach.Reach{User: acct}
	}
	return checked(acct, t, ProgramOf(cfg, t))
}

// checkReach refuses the trial when the caller hands the sandbox what its user cannot reach.
// The commands refuse before this (with warnings); it guards `go test ./suites` and a runner's
// trials on other hosts, which meet their own PATH.
func (t *Trial) checkReach() error {
	return checked(t.Account, t.Target, ProgramOf(t.Config, t.Target)).Err()
}

// reachChecked remembers reach.Check per account, target, program and PATH for this process:
// the command asks first, then every trial of the process as it Opens, with the same ones.
var reachChecked sync.Map

func checked(acct *users.Account, t targets.Target, prog reach.Program) reach.Reach {
	path := os.Getenv("PATH")
	key := fmt.Sprintf("%d\x00%s\x00%s\x00%s", acct.UID, t.Name(), prog.Path, path)
	if v, ok := reachChecked.Load(key); ok {
		return v.(reach.Reach)
	}
	r := reach.Check(acct, t, prog, path)
	reachChecked.Store(key, r)
	return r
}
