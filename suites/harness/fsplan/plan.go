//go:build linux

// Package fsplan is one filesystem check of a trial: what the command tries (a probe.FSCheck),
// what the policy says of it, how the host side tells whether it took effect and undoes it, and
// the control that tries it first as the same user without a sandbox (what the user cannot do
// anyway proves nothing). The filesystem scenario and the fs-interplay session are built of them.
package fsplan

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	fsverdict "github.com/sandcheck/sandcheck/suites/classify/filesystem"

	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/latefiles"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// Plan is one filesystem check with what the policy says about it and how the host side can
// tell whether it took effect.
type Plan struct {
	Check probe.FSCheck
	Allow bool
	// Outside is the host path whose existence after the run proves a denied write escaped;
	// Gone is a host path whose disappearance proves it (a rename out of a read-only area).
	Outside, Gone string
	// Changed is a host file whose content must stay as it was.
	Changed, Was string
	// Tail is a host file that, ending with the check's token, proves a denied append went
	// through: a file too large to compare whole (a sandbox's own executable).
	Tail string
	// Written is a host file that, holding the check's token, proves a denied write went
	// through. Only the token proves it: a sandbox may leave empty files or directories at the
	// paths it protects (srt's mount points).
	Written string
	// Linked is a host path that, being the very file Check.Path2 is (same inode), proves a
	// denied hard link went through; a copy of the file proves nothing.
	Linked string
	// Strict: a write that succeeded inside the sandbox is a breach even if the host never saw
	// it (a read-denied directory must not become writable: a tmpfs the command can fill; a
	// protected workspace file must not be writable at all).
	Strict bool
	// Late is the file the host makes while the command runs (Check.Await asks for it).
	Late *latefiles.File
	// Next: the check plants a link that the next session's set-up meets; outside is decided
	// after that session (the setup class).
	Next bool
}

// Created is a file the command must not be able to create, its directories with it: the
// workspace is a host directory, and only the token proves the file was written there (a
// sandbox may leave an empty placeholder where it protects a path).
func Created(name, path, token string) Plan {
	return Plan{Check: probe.FSCheck{Name: name, Op: probe.OpWrite, Path: path, Content: token, Mkdir: true}, Written: path, Strict: true}
}

// HostChecked says whether the host side can tell if the check's effect escaped.
func (p Plan) HostChecked() bool {
	return p.Outside != "" || p.Gone != "" || p.Changed != "" || p.Written != "" || p.Linked != "" || p.Tail != ""
}

// Escaped reports whether a denied check's effect is visible on the host.
func (p Plan) Escaped() bool {
	if p.Allow {
		return false
	}
	if p.Outside != "" {
		if _, err := os.Lstat(p.Outside); err == nil {
			return true
		}
	}
	if p.Gone != "" {
		if _, err := os.Lstat(p.Gone); os.IsNotExist(err) {
			return true
		}
	}
	if p.Changed != "" {
		b, err := os.ReadFile(p.Changed)
		if err == nil && !bytes.Equal(b, []byte(p.Was)) {
			return true
		}
	}
	if p.Written != "" && holdsToken(p.Written, p.Check.Content) {
		return true
	}
	if p.Linked != "" && sameFile(p.Linked, p.Check.Path2) {
		return true
	}
	return p.Tail != "" && endsWithToken(p.Tail, p.Check.Content)
}

// endsWithToken says whether path is a regular file on the host whose last bytes hold token.
func endsWithToken(path, token string) bool {
	fi, err := os.Lstat(path)
	if token == "" || err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	n := min(fi.Size(), int64(4<<10))
	b := make([]byte, n)
	if _, err := f.ReadAt(b, fi.Size()-n); err != nil && err != io.EOF {
		return false
	}
	return bytes.Contains(b, []byte(token))
}

// holdsToken says whether path is a regular file on the host with token in it. Anything else
// there (nothing, an empty placeholder, a directory, a device a sandbox mounted) is no write.
func holdsToken(path, token string) bool {
	if token == "" {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return bytes.Contains(b, []byte(token))
}

// sameFile says whether link and target are one file on the host (a hard link, not a copy).
func sameFile(link, target string) bool {
	a, err := os.Lstat(link)
	if err != nil {
		return false
	}
	b, err := os.Lstat(target)
	return err == nil && os.SameFile(a, b)
}

// RemoveEscape deletes from the host what the check's escape left there: the file outside, the
// token written into a protected file (and the directories made for it, when empty), the hard
// link (never the outside file it names).
func (p Plan) RemoveEscape(ws string) {
	if p.Outside != "" {
		os.RemoveAll(p.Outside)
	}
	if p.Written != "" && holdsToken(p.Written, p.Check.Content) {
		os.Remove(p.Written)
		for d := filepath.Dir(p.Written); strings.HasPrefix(d, ws+"/"); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty: the layout's own, or another check's
			}
		}
	}
	if p.Linked != "" && sameFile(p.Linked, p.Check.Path2) {
		os.Remove(p.Linked)
	}
}

// Skipped says why checks are not tried under the sandbox: nothing they showed could be judged.
type Skipped map[string]unjudged

type unjudged struct {
	why string
	// broken: the control run without a sandbox failed for a reason that is not a permission
	// (no space, an I/O error, a cross-device rename, a timeout): harness trouble, which says
	// nothing of the sandbox, never not-applicable.
	broken bool
}

// NotApplicable marks a check the target cannot express, or the user cannot do anyway.
func (s Skipped) NotApplicable(name, why string) { s[name] = unjudged{why: why} }

// Broken marks a check whose control without a sandbox failed for a reason that is not a
// permission: harness trouble, never not-applicable.
func (s Skipped) Broken(name, why string) { s[name] = unjudged{why: why, broken: true} }

// Why is why a check is skipped ("" if it is not).
func (s Skipped) Why(name string) string { return s[name].why }

// Expect is what the classifier needs of a check's skip.
func (s Skipped) Expect(e *fsverdict.Expect) {
	switch k, ok := s[e.Check.Name]; {
	case !ok:
	case k.broken:
		e.ControlFailed = k.why
	default:
		e.NotApplicable = k.why
	}
}

// Applicable is the probe spec of the checks na leaves to be tried; the others are not tried:
// nothing they show could be judged.
func Applicable(plans []Plan, na Skipped) probe.Spec {
	spec := probe.Spec{}
	for _, p := range plans {
		if _, ok := na[p.Check.Name]; ok {
			continue
		}
		spec.FS = append(spec.FS, p.Check)
	}
	return spec
}

// judge classifies the sandboxed run x of plans into ft, the checks in na not applicable.

// Unsandboxed runs the denied checks that are still applicable as the trial's user, outside
// any sandbox, and marks the ones that fail not-applicable in na, with the reason. It returns
// what the probe saw. Undoing the checks' effects is the caller's (the layout made afresh).
func Unsandboxed(ctx context.Context, t *harness.Trial, plans []Plan, na Skipped, token string) ([]probe.FSResult, error) {
	spec := probe.Spec{Nonce: harness.RandomHex(8), FS: ControlChecks(plans, na)}
	if len(spec.FS) == 0 {
		return nil, nil
	}
	specFile := filepath.Join(t.Dir, "probe-unsandboxed-"+spec.Nonce+".json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, fmt.Errorf("write probe spec: %w", err)
	}
	if err := t.Account.Chown(t.Dir, harness.RootOwned); err != nil {
		return nil, err
	}
	argv := t.Account.Command([]string{t.ProbeBin, probe.Arg, specFile}, nil)
	run := proc.RunCommand(ctx, argv, t.Env, t.Workspace, spec.Nonce, t.Config.RunTimeout(), t.Config.KillGrace())
	out, err := probe.Parse(run.Stdout, spec.Nonce)
	if err == nil && out.Obs == nil {
		err = fmt.Errorf("no observation")
	}
	if err != nil {
		return nil, fmt.Errorf("unsandboxed checks as %s (exit %d, %s): %w", t.Account, run.Exit, strings.TrimSpace(run.Stderr), err)
	}
	got := map[string]probe.FSResult{}
	for _, r := range out.Obs.FS {
		got[r.Name] = r
	}
	who := "root"
	if !t.Account.IsRoot() {
		who = "user " + t.Account.Name
	}
	for _, c := range spec.FS {
		r, ok := got[c.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("unsandboxed checks as %s: %s not reported", t.Account, c.Name)
		case c.Op == probe.OpRead && r.OK && strings.Contains(r.Data, token):
		case c.Op == probe.OpRead && r.OK:
			na.NotApplicable(c.Name, fmt.Sprintf("%s reads %s without any sandbox, but not the canary: the check proves nothing here", who, c.Path))
		case !r.OK && permission(r.Errno):
			na.NotApplicable(c.Name, fmt.Sprintf("%s cannot %s %s even without a sandbox (%s): a refusal inside would prove nothing", who, c.Op, c.Path, r.Errno))
		case !r.OK:
			na.Broken(c.Name, fmt.Sprintf("the control without a sandbox failed: %s %s as %s: %s", c.Op, c.Path, who, cmp.Or(r.Errno, r.Err, "no error reported")))
		}
	}
	return out.Obs.FS, nil
}

// ControlChecks are the checks the user tries without a sandbox: the denied ones still
// applicable, each without its privileged step. The control is the operation itself; the step
// would remount or unmount the host's own mounts.
func ControlChecks(plans []Plan, na Skipped) []probe.FSCheck {
	var out []probe.FSCheck
	for _, p := range plans {
		if _, ok := na[p.Check.Name]; !p.Allow && !ok {
			c := p.Check
			c.Privileged, c.Control = "", true
			out = append(out, c)
		}
	}
	return out
}

// permission says whether an errno is a refusal by permission: what the user cannot do anyway,
// so the check is not applicable. Anything else (ENOSPC, EIO, EXDEV, ENOENT, a timeout, no errno
// at all) means the control itself broke.
func permission(errno string) bool {
	switch errno {
	case "EACCES", "EPERM", "EROFS":
		return true
	}
	return false
}

// Describe says what a plan tries and what the policy says of it.
func (p Plan) Describe() string {
	c := p.Check
	var what string
	switch c.Op {
	case probe.OpWrite:
		what = "writing " + c.Path
		if c.Mkdir {
			what = "creating " + c.Path + " and its directories"
		}
	case probe.OpAppend:
		what = "appending to " + c.Path
	case probe.OpReplace:
		what = "replacing " + c.Path + " (a new file renamed over it)"
	case probe.OpRead:
		what = "reading " + c.Path
	case probe.OpLink:
		what = fmt.Sprintf("hard-linking %s to %s", c.Path, c.Path2)
	case probe.OpRename:
		what = fmt.Sprintf("renaming %s to %s", c.Path, c.Path2)
	case probe.OpPtrace:
		what = "taking over a process in view that is less confined than the command (no seccomp filter, or capabilities the command lacks) by ptrace or by opening its memory for writing"
	case probe.OpSymlink:
		what = fmt.Sprintf("creating the symlink %s to %s", c.Path, c.Path2)
	default:
		what = c.Op + " " + c.Path
	}
	switch c.Privileged {
	case probe.PrivRemount:
		what = "after remounting its mount read-write, " + what
	case probe.PrivUnmount:
		what = "after unmounting the mounts over it, " + what
	case probe.PrivUsernsUnmount:
		what = "in a user namespace of the command's own (unshare -rm), after unmounting the mounts over it, " + what
	case probe.PrivUsernsBind:
		what = "in a user namespace of the command's own, through a bind mount of the directory under its mount (without submounts), " + what
	case probe.PrivUsernsOpenTree:
		what = "in a user namespace of the command's own, through a clone of the directory under its mount (open_tree without AT_RECURSIVE), " + what
	}
	if p.Late != nil {
		what += ", made on the host after the command started,"
	}
	if p.Allow {
		return what + " succeeds"
	}
	return what + " is refused"
}
