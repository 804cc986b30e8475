// Package skip is the one way sandcheck's tests skip, with one message shape,
// "SKIPPED LOUDLY: <why>", so that a test log shows every test that measured nothing and why (a
// tool missing, no root, a tier not asked for), and nothing skips quietly.
package skip

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// EnvLong selects the long tier of the tests ("1").
const EnvLong = "SANDCHECK_LONG"

// Loudly skips the test, saying why.
func Loudly(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Skip("SKIPPED LOUDLY: " + fmt.Sprintf(format, args...))
}

// If skips the test, saying why, when cond holds.
func If(t testing.TB, cond bool, format string, args ...any) {
	t.Helper()
	if cond {
		Loudly(t, format, args...)
	}
}

// Short skips the test under -short; what says what it would cost.
func Short(t testing.TB, what string) {
	t.Helper()
	If(t, testing.Short(), "-short: %s", what)
}

// UnlessLong skips the test unless the long tier is asked for ($SANDCHECK_LONG=1); what says
// what it costs.
func UnlessLong(t testing.TB, what string) {
	t.Helper()
	If(t, os.Getenv("SANDCHECK_LONG") != "1", "long tier: set %s=1 (%s)", EnvLong, what)
}

// UnlessRoot skips the test unless it runs as root; why says what needs root.
func UnlessRoot(t testing.TB, why string) {
	t.Helper()
	If(t, os.Geteuid() != 0, "needs root: %s", why)
}

// UnlessTools skips the test unless every tool is on PATH; install says how to get them.
func UnlessTools(t testing.TB, install string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Loudly(t, "%s not installed (%s)", tool, install)
		}
	}
}
