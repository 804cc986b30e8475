//go:build linux

package fsplan

import (
	"testing"

	fsverdict "github.com/sandcheck/sandcheck/suites/classify/filesystem"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// A control that failed by permission makes its check not-applicable; one that failed any other
// way (no space, I/O, cross-device, nothing reported) makes it harness trouble.
func TestControlFailures(t *testing.T) {
	for errno, want := range map[string]bool{"EACCES": true, "EPERM": true, "EROFS": true,
		"ENOSPC": false, "EIO": false, "EXDEV": false, "ENOENT": false, "ETIMEDOUT": false, "": false} {
		if got := permission(errno); got != want {
			t.Errorf("permission(%q) = %v, want %v", errno, got, want)
		}
	}
	s := Skipped{}
	s.NotApplicable("outside/etc", "user u cannot write /etc even without a sandbox (EACCES)")
	s.Broken("escape/rename-out", "the control without a sandbox failed: EXDEV")
	for name, want := range map[string][2]string{
		"outside/etc":       {"user u cannot write /etc even without a sandbox (EACCES)", ""},
		"escape/rename-out": {"", "the control without a sandbox failed: EXDEV"},
		"outside/tmp":       {"", ""},
	} {
		e := fsverdict.Expect{Check: probe.FSCheck{Name: name}}
		s.Expect(&e)
		if e.NotApplicable != want[0] || e.ControlFailed != want[1] {
			t.Errorf("%s: n/a %q, control failed %q; want %q", name, e.NotApplicable, e.ControlFailed, want)
		}
	}
	if spec := Applicable([]Plan{{Check: probe.FSCheck{Name: "escape/rename-out"}}, {Check: probe.FSCheck{Name: "outside/tmp"}}}, s); len(spec.FS) != 1 || spec.FS[0].Name != "outside/tmp" {
		t.Errorf("an unjudged check was tried under the sandbox: %+v", spec.FS)
	}
}
