//go:build linux

package filesystem

import (
	"slices"

	"github.com/sandcheck/sandcheck/model"
)

// The nesting class: the sandbox in the weaker mode it documents for running nested, inside a
// container where it cannot mount a /proc of its own or turn user namespaces off (srt's
// enableWeakerNestedSandbox, and allowNestedUserNamespaces where the release reads it, which
// srt's own schema says "gives up the write denies against a hostile command"). The command
// then takes the user-namespace steps of the userns class, and looks for a process in view less
// confined than itself (a weaker mode may show it the host's /proc), in a session of its own.
// The host side decides, as for the other filesystem classes.

// ClassNesting is the nesting class's name.
const ClassNesting = "nesting"

// nestingChecks are the userns class's checks (named userns-CASE) and the privilege class's
// ptrace of a less confined process, as the nesting class's, each needing the weaker mode too.
func (l fsInterplay) nestingChecks(token string) []InterplayCheck {
	var out []InterplayCheck
	for _, c := range l.checks(token) {
		switch {
		case c.Class == ClassUserns:
			c.Name = "userns-" + c.Name
		case c.Class == ClassPrivilege && c.Name == "ptrace-helper":
		default:
			continue
		}
		c.Class = ClassNesting
		c.Needs = append(slices.Clone(c.Needs), model.CapWeakerNesting)
		out = append(out, c)
	}
	return out
}
