package hosts

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/users"
)

// ensureUsers readies the accounts a host's cells run the sandbox as, through sandcheck on the
// host (`sandcheck user SPEC`): the dedicated account is created there once, before the first
// trial, and a named account that does not exist stops the run as a configuration error instead
// of failing every trial. run executes sandcheck's arguments on the host.
func ensureUsers(specs []string, run func(argv []string) (out []byte, exit int, err error)) error {
	for _, s := range specs {
		if s == users.Root {
			continue
		}
		out, exit, err := run([]string{"user", s})
		if err != nil || exit != 0 {
			return fmt.Errorf("user %s: exit %d %v: %s", s, exit, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// sweepUsers is the shell command that cleans up after the host's users when it closes
// (`sandcheck user --sweep SPEC`, see there), before the run directory holding bin goes.
func sweepUsers(bin string, specs []string) string {
	var cmd []string
	for _, s := range specs {
		if s != users.Root {
			cmd = append(cmd, shq(bin)+" user --sweep "+shq(s)+" >/dev/null 2>&1")
		}
	}
	if len(cmd) == 0 {
		return ""
	}
	return strings.Join(cmd, "; ") + "; "
}
