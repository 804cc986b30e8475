//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/doctor"
	"github.com/sandcheck/sandcheck/fixtures/users"
)

func init() {
	register("user", "show (and create, when it is the dedicated one) the account sandboxes run as", userCmd)
}

// userCmd resolves a user spec the way every trial does: the dedicated account is created on
// first use (useradd: its own group, HOME /home/sandcheck, no login shell, no password), an
// account given by name must exist. Hosts run it at prepare time, so a missing account fails
// the run before any trial starts.
func userCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("user", "[--json|--sweep] [unprivileged|root|NAME]", `  sandcheck user                  # the dedicated account (created if missing)
  sandcheck user --json ci        # an existing account, as JSON
  sandcheck user --sweep          # remove what killed trials left as the dedicated account`, stderr)
	asJSON := fs.Bool("json", false, "print the account as JSON")
	sweep := fs.Bool("sweep", false, "when no trial of the account runs: kill what dead trials left running as it and remove what they left in /tmp, /var/tmp and /dev/shm")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "sandcheck user: one user at a time (got %s)\n", strings.Join(fs.Args(), " "))
		return 2
	}
	a, err := users.Resolve(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck user: %v\n", err)
		return 1
	}
	if *sweep {
		done, err := a.Sweep()
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck user: %v\n", err)
			return 1
		}
		for _, d := range done {
			fmt.Fprintf(stdout, "%s\n", d)
		}
		return 0
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(a)
		return 0
	}
	fmt.Fprintf(stdout, "%s: %s uid=%d gid=%d groups=%v home=%s shell=%s", a.Spec, a.Name, a.UID, a.GID, a.Groups, a.Home, a.Shell)
	for _, n := range a.Notes {
		fmt.Fprintf(stdout, " (%s)", n)
	}
	fmt.Fprintln(stdout)
	return 0
}

// fingerprintUser is the user part of a host fingerprint. A trial has resolved its user (and
// created the dedicated account) before it fingerprints; doctor only looks (create false).
func fingerprintUser(spec string, create bool) *doctor.User {
	spec = users.Normalize(spec)
	u := &doctor.User{Spec: spec}
	var a *users.Account
	var err error
	switch {
	case create || spec == users.Root:
		a, err = users.Resolve(spec)
	case spec == users.Unprivileged:
		a, err = users.Lookup(users.DedicatedName)
		if err != nil {
			u.Note = users.DedicatedName + " does not exist yet: the first trial creates it (or `sandcheck user`)"
			return u
		}
	default:
		a, err = users.Lookup(spec)
	}
	if err != nil {
		u.Note = err.Error()
		return u
	}
	u.Name, u.UID, u.GID, u.Groups, u.Home = a.Name, a.UID, a.GID, a.Groups, a.Home
	return u
}
