package hosts

import (
	"fmt"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// EnsureUsers readies the accounts a host's cells run the sandbox as, through sandcheck on the
// host (`sandcheck user SPEC`): the dedicated account is created there once, before the first
// trial, and a named account that does not exist stops the run as a configuration error instead
// of failing every trial. run executes sandcheck's arguments on the host.
func EnsureUsers(specs []string, run func(argv []string) (out []byte, exit int, err error)) error {
	for _, s := range specs {
		if s == model.UserRoot {
			continue
		}
		out, exit, err := run([]string{"user", s})
		if err != nil || exit != 0 {
			return fmt.Errorf("user %s: exit %d %v: %s", s, exit, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
