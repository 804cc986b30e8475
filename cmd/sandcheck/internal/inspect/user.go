//go:build linux

package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/fixtures/users"
)

func init() {
	cli.Register("user", "show (and create, when it is the dedicated one) the account sandboxes run as", userCmd)
}

// userCmd resolves a user spec the way every trial does: the dedicated account is created on
// first use (useradd: its own group, HOME /home/sandcheck, no login shell, no password), an
// account given by name must exist. Hosts run it at prepare time, so a missing account fails
// the run before any trial starts.
func userCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("user", "[--json|--sweep] [unprivileged|root|NAME]", `  sandcheck user                  # the dedicated account (created if missing)
  sandcheck user --json ci        # an existing account, as JSON
  sandcheck user --sweep          # remove what killed trials left as the dedicated account`, stderr)
	asJSON := fs.Bool("json", false, "print the account as JSON")
	sweep := fs.Bool("sweep", false, "when no trial of the account runs: kill what dead trials left running as it and remove what they left in /tmp, /var/tmp and /dev/shm")
	if ok, code := cli.Parse(fs, args); !ok {
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
