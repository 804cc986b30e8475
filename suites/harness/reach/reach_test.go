//go:build linux

package reach

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// reachTarget is a sandbox that starts prog and runs socat from its PATH, as srt does.
type reachTarget struct{ prog string }

func (reachTarget) Name() string                                          { return "fake" }
func (reachTarget) Capabilities() []model.Capability                      { return nil }
func (reachTarget) Reach() []string                                       { return nil }
func (reachTarget) Version() string                                       { return "1" }
func (reachTarget) Prepare(*targets.Session) (*targets.Invocation, error) { return nil, nil }
func (reachTarget) Seams() []model.Seam                                   { return []model.Seam{model.HelperTool("socat")} }
func (t reachTarget) Starts() string                                      { return t.prog }

// TestCheck: a shim a user put first on PATH in a root-only directory, for a program the
// sandbox starts, refuses the run for the unprivileged user (the sandbox would start the real
// one) and not for root; an unreachable entry holding nothing the sandbox starts is a warning;
// a sandbox program, or its interpreter, the user cannot run refuses it, named as the run named it.
func TestCheck(t *testing.T) {
	skip.If(t, os.Geteuid() != 0, "the sandbox's user is created and switched to as root")
	acct, err := users.Resolve(model.UserUnprivileged)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "sandcheck-reach-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	private := filepath.Join(dir, "root-home") // 0700 and root's, as /root
	shims, tools, open := filepath.Join(private, "shims"), filepath.Join(private, "tools"), filepath.Join(dir, "bin")
	for _, d := range []string{shims, tools, open} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(private, 0o700)
	write := func(p, text string) string {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(filepath.Join(shims, "socat"), "#!/bin/sh\nexit 1\n")
	write(filepath.Join(open, "socat"), "#!/bin/sh\nexit 0\n")
	write(filepath.Join(tools, "python3"), "#!/bin/sh\nexit 0\n")
	prog := write(filepath.Join(open, "sandbox"), "#!/usr/bin/env fakenode\n")
	system := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" // no root-only entries of this machine
	withShim := shims + ":" + open + ":" + system

	r := Check(acct, reachTarget{prog}, Program{Path: prog}, withShim)
	err = r.Err()
	if err == nil {
		t.Fatalf("a socat shim the user cannot reach, first on PATH: not refused (warnings %q)", r.Warn)
	}
	for _, want := range []string{"PATH entry 1, " + shims, private + " is mode 0700, owner root", "your PATH finds socat there",
		"it would start " + filepath.Join(open, "socat") + " instead", "--user root"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%v", want, err)
		}
	}
	if r := Check(&users.Account{Name: "root"}, reachTarget{prog}, Program{Path: prog}, withShim); r.Err() != nil || len(r.Warn) > 0 {
		t.Errorf("root: %v %q", r.Err(), r.Warn)
	}

	// Out of reach, but nothing there the sandbox starts: said, not refused. Absent: not said.
	r = Check(acct, reachTarget{prog}, Program{Path: prog}, tools+":"+filepath.Join(dir, "absent")+":"+open+":"+system)
	if r.Err() != nil || len(r.Warn) != 1 || !strings.Contains(r.Warn[0], tools) || !strings.Contains(r.Warn[0], "python3") {
		t.Errorf("a python3 the sandbox does not start: %v %q", r.Err(), r.Warn)
	}

	// The program's interpreter is looked up by name: a shim of it counts as socat's does.
	write(filepath.Join(shims, "fakenode"), "#!/bin/sh\nexit 1\n")
	if err := Check(acct, reachTarget{prog}, Program{Path: prog}, shims+":"+system).Err(); err == nil ||
		!strings.Contains(err.Error(), "finds fakenode, socat there") || !strings.Contains(err.Error(), "it would find no fakenode at all") {
		t.Errorf("the program's interpreter shimmed: %v", err)
	}

	// The sandbox itself out of reach: it would not start, which a fail-closed scenario counts
	// as a refusal. Named as the run named it (a matrix: file:line: field).
	hidden := write(filepath.Join(tools, "sandbox"), "#!/bin/sh\nexit 0\n")
	at := "m.yaml:4: targets[0].settings.path"
	err = Check(acct, reachTarget{hidden}, Program{What: at, Path: hidden}, system).Err()
	if err == nil || !strings.Contains(err.Error(), at+": user "+acct.Name+" cannot run "+hidden+": "+private+" is mode 0700") {
		t.Errorf("an unreachable sandbox: %v", err)
	}
	if err := Check(acct, reachTarget{"mysandbox"}, Program{Path: "mysandbox"}, shims+":"+system).Err(); err == nil {
		t.Error("a sandbox found by name on PATH only in an unreachable entry: not refused")
	}
}
