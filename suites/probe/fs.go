package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sandcheck/sandcheck/suites/probe/errno"
	"github.com/sandcheck/sandcheck/suites/probe/privilege"
)

// Filesystem operations a check can perform inside the sandbox.
const (
	OpWrite   = "write"   // create or truncate Path and write Content (parents created)
	OpAppend  = "append"  // append Content to an existing Path
	OpRead    = "read"    // read Path
	OpLink    = "link"    // hard link Path2 (an outside file) to Path
	OpRename  = "rename"  // rename Path to Path2
	OpSymlink = "symlink" // create a symlink at Path pointing to Path2
	// OpReplace writes Content to a new file beside Path and renames it over Path: how an
	// installer swaps a program, and what a running program's file allows (it refuses writes
	// into it, ETXTBSY, not its replacement).
	OpReplace = "replace"
	// OpPtrace takes over a process in view that is less confined than the command (ptrace, or
	// its memory opened for writing); Path is unused. In a control run, the probe's own child.
	OpPtrace = "ptrace-looser"
)

// Privileged steps a check can take before its operation (package privilege).
const (
	PrivRemount = privilege.Remount
	PrivUnmount = privilege.Unmount
	// In a new user and mount namespace of the command's own (usernsOp).
	PrivUsernsUnmount  = privilege.UsernsUnmount
	PrivUsernsBind     = privilege.UsernsBind
	PrivUsernsOpenTree = privilege.UsernsOpenTree
)

// FSCheck is one filesystem operation the probe attempts. The probe only reports what happened;
// whether it should have been allowed is the classifier's business.
type FSCheck struct {
	Name    string `json:"name"`
	Op      string `json:"op"`
	Path    string `json:"path"`
	Path2   string `json:"path2,omitempty"`
	Content string `json:"content,omitempty"`
	// Mkdir creates missing parent directories first. Off by default: a write outside the
	// workspace must not create directories on the host when a sandbox fails to confine it.
	Mkdir bool `json:"mkdir,omitempty"`
	// Privileged is a step taken first (PrivRemount, PrivUnmount); "" none.
	Privileged string `json:"privileged,omitempty"`
	// Await, when set, is a file the probe creates to ask the host for the check's file, and
	// whose ".ack" it then waits for (up to awaitLimit) before the operation: the host makes the
	// file only once the command runs, after the sandbox has set up what it covers at the start.
	Await string `json:"await,omitempty"`
	// Control marks the run without a sandbox, where an operation that would reach beyond the
	// trial (the host's other processes) tries its own stand-in instead.
	Control bool `json:"control,omitempty"`
}

// awaitLimit bounds the wait for the host's ack of an Await.
var awaitLimit = 10 * time.Second

// FSResult is what one check saw.
type FSResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Errno string `json:"errno,omitempty"` // EROFS, EACCES, EPERM, EXDEV, ENOENT ...
	Err   string `json:"err,omitempty"`
	Data  string `json:"data,omitempty"` // first bytes read
	// Path is the path as resolved inside ($TMPDIR expanded); Created the directories the
	// write had to make. The harness removes both from the host if they escaped there.
	Path    string   `json:"path,omitempty"`
	Created []string `json:"created,omitempty"`
	// Privileged says what the check's privileged step did: the mounts it changed, or why
	// it could not.
	Privileged string `json:"privileged,omitempty"`
	// Awaited says the host acked the check's Await before the operation. Only the host's own
	// record of having made the file counts as evidence; this is for the report.
	Awaited bool `json:"awaited,omitempty"`
}

// runFS performs the checks in order.
func runFS(checks []FSCheck) []FSResult {
	out := make([]FSResult, 0, len(checks))
	for _, c := range checks {
		r := FSResult{Name: c.Name}
		err := fsOp(c, &r)
		if err != nil {
			r.Err, r.Errno = err.Error(), errno.Name(err)
		} else {
			r.OK = true
		}
		out = append(out, r)
	}
	return out
}

func fsOp(c FSCheck, r *FSResult) error {
	// Paths may name the sandbox's own environment ($TMPDIR, $HOME), known only inside.
	c.Path, c.Path2 = os.ExpandEnv(c.Path), os.ExpandEnv(c.Path2)
	r.Path = c.Path
	if privilege.InUserns(c.Privileged) {
		return usernsOp(c, r)
	}
	if c.Privileged != "" {
		r.Privileged = privilege.Mounts(c.Privileged, c.Path)
	}
	if c.Await != "" {
		r.Awaited = await(c.Await)
	}
	if c.Mkdir && (c.Op == OpWrite || c.Op == OpSymlink) {
		for d := filepath.Dir(c.Path); d != "/" && d != "."; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil {
				break
			}
			r.Created = append(r.Created, d)
		}
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
			return err
		}
	}
	switch c.Op {
	case OpWrite:
		return os.WriteFile(c.Path, []byte(c.Content), 0o644)
	case OpAppend:
		f, err := os.OpenFile(c.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(c.Content)
		return errors.Join(err, f.Close())
	case OpReplace:
		next := c.Path + ".sandcheck-new"
		if err := os.WriteFile(next, []byte(c.Content), 0o755); err != nil {
			return err
		}
		return os.Rename(next, c.Path)
	case OpRead:
		b, err := os.ReadFile(c.Path)
		if len(b) > bodyLimit {
			b = b[:bodyLimit]
		}
		r.Data = string(b)
		return err
	case OpLink:
		return os.Link(c.Path2, c.Path)
	case OpRename:
		return os.Rename(c.Path, c.Path2)
	case OpSymlink:
		return os.Symlink(c.Path2, c.Path)
	case OpPtrace:
		data, err := privilege.Looser(c.Control)
		r.Data = data
		return err
	}
	return fmt.Errorf("unknown op %q", c.Op)
}

// await asks the host for a check's file by creating mark, and waits for mark.ack.
func await(mark string) bool {
	if os.WriteFile(mark, nil, 0o644) != nil {
		return false
	}
	for deadline := time.Now().Add(awaitLimit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(mark + ".ack"); err == nil {
			return true
		}
	}
	return false
}
