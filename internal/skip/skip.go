// Package skip is the one way sandcheck's tests skip, with one message shape,
// "SKIPPED LOUDLY: <why>", so that a test log shows every test that measured nothing and why, and
// nothing skips quietly. Each skip says its kind:
//
//   - Tier: a tier of the tests that was not asked for (-short, the long tier, an opt-in
//     recorder). A skip everywhere.
//   - NotApplicable: what the test checks does not exist here by design (another architecture
//     or platform), whatever is installed. A skip everywhere.
//   - Missing (UnlessRoot, UnlessTools): a tool, privilege, kernel feature or cache this machine
//     lacks. A skip on a developer's machine, but a failure where $CI is true: CI must provide
//     everything the suite needs, or an end-to-end test would pass there having measured nothing.
//
// internal/skip's TestNoBareSkips keeps testing's own Skip out of every other file.
package skip

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// LongTierVar selects the long tier of the tests ("1"): a test knob, read here, not a setting.
const LongTierVar = "SANDCHECK_LONG"

// CIVar is true where CI runs the tests: GitHub Actions sets it for every step, .ci/run
// exports it.
const CIVar = "CI"

// geteuid is os.Geteuid; the tests replace it to see both sides of UnlessRoot.
var geteuid = os.Geteuid

// InCI says whether the environment says CI ($CI true, as strconv.ParseBool reads it).
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv(CIVar))
	return ci
}

func loudly(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Skip("SKIPPED LOUDLY: " + fmt.Sprintf(format, args...))
}

// Tier skips the test, saying why: a tier of the tests that was not asked for.
func Tier(t testing.TB, format string, args ...any) {
	t.Helper()
	loudly(t, format, args...)
}

// NotApplicable skips the test, saying why: what it checks does not exist here by design
// (another architecture or platform), not for want of anything CI could install.
func NotApplicable(t testing.TB, format string, args ...any) {
	t.Helper()
	loudly(t, format, args...)
}

// Missing skips the test, saying what this machine lacks (a tool, a privilege, a kernel feature,
// a cache); under CI=true it fails the test with the same message instead.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("MISSING IN CI: %s\n(%s=true: CI must provide this; a skip here would pass having measured nothing)",
			fmt.Sprintf(format, args...), CIVar)
	}
	loudly(t, format, args...)
}

// Short skips the test under -short (a tier); what says what it would cost.
func Short(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		Tier(t, "-short: %s", what)
	}
}

// UnlessLong skips the test unless the long tier is asked for ($SANDCHECK_LONG=1); what says
// what it costs.
func UnlessLong(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(LongTierVar) != "1" {
		Tier(t, "long tier: set %s=1 (%s)", LongTierVar, what)
	}
}

// UnlessRoot is Missing unless the test runs as root; why says what needs root.
func UnlessRoot(t testing.TB, why string) {
	t.Helper()
	if geteuid() != 0 {
		Missing(t, "needs root: %s", why)
	}
}

// UnlessTools is Missing unless every tool is on PATH; install says how to get them.
func UnlessTools(t testing.TB, install string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Missing(t, "%s not installed (%s)", tool, install)
		}
	}
}
