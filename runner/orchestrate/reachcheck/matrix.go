//go:build linux

// Package reachcheck checks, before a run, what its local trials hand the sandbox that the
// sandbox's user cannot reach (fixtures/reach).
package reachcheck

import (
	"errors"
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/fixtures/reach"
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/targets"
)

// Matrix checks, before any trial, what the local hosts' trials of m hand the sandbox's user:
// path, the PATH they inherit, and every target's program as its trials run it (targetPath is
// --target-path, versionPaths the installed versions' executables by "TARGET-ID@VERSION").
// Warnings go to log; the error refuses the run, naming each entry or file (one a matrix names by
// file:line: field). Other host kinds meet their own PATH and files, and their trials check there.
func Matrix(m *matrix.Matrix, targetPath string, versionPaths map[string]string, path string, log io.Writer) error {
	var errs []error
	warned := map[string]bool{}
	for _, h := range m.Hosts {
		if h.Kind != matrix.KindLocal {
			continue
		}
		for _, spec := range h.Users {
			acct, err := users.Resolve(spec)
			if err != nil || acct.IsRoot() {
				continue // preparing the host names an account that cannot be had
			}
			all := reach.Reach{User: acct}
			refused := map[string]bool{}
			for _, t := range m.Targets {
				for _, s := range starts(t, targetPath, versionPaths) {
					tgt, err := targets.New(t.Name, s.settings)
					if err != nil {
						continue // its trials say why
					}
					prog := reach.Program{What: s.what}
					if st, ok := tgt.(targets.Starter); ok {
						prog.Path = st.Starts()
					}
					r := reach.Check(acct, tgt, prog, path)
					for _, w := range r.Warn {
						if !warned[acct.Name+w] {
							warned[acct.Name+w] = true
							fmt.Fprintf(log, "warning: %s\n", w)
						}
					}
					for _, x := range r.Refuse {
						if !refused[x] {
							refused[x] = true
							all.Refuse = append(all.Refuse, x)
						}
					}
				}
			}
			if err := all.Err(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// start is one way a target's trials are configured (the adapter's settings, as a trial hands
// them to targets.New), and how the run names the program they start ("" when the adapter finds it).
type start struct {
	settings map[string]string
	what     string
}

// starts are the ways t's trials start, as the runner hands them over: the installed version's
// executable, else --target-path, else the target's settings.path, else the adapter's own find.
func starts(t matrix.Target, targetPath string, versionPaths map[string]string) []start {
	one := start{settings: targets.FlattenSettings(t.Settings)}
	switch {
	case targetPath != "":
		one.settings["path"], one.what = targetPath, "--target-path"
	case one.settings["path"] != "":
		one.what = "--target-settings path"
		if at, ok := t.SettingsAt["path"]; ok {
			one.what = at.String()
		}
	}
	if len(t.Resolved) == 0 {
		return []start{one}
	}
	var out []start
	for _, v := range t.Resolved {
		c := start{settings: map[string]string{}, what: one.what}
		for k, x := range one.settings {
			c.settings[k] = x
		}
		if vp := versionPaths[t.ID+"@"+v]; vp != "" {
			c.settings["path"], c.what = vp, "the sandbox "+t.Name+"@"+v
		}
		out = append(out, c)
	}
	return out
}
