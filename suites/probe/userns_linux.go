package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/suites/probe/privilege"
)

// usernsArg starts the probe as the child that takes a check's step in a new user and mount
// namespace, and its operation there (usernsOp).
const usernsArg = "__sandcheck_userns"

// usernsReport is what the child says of its check: the result, and the error as its number.
type usernsReport struct {
	Result FSResult `json:"result"`
	Err    string   `json:"err,omitempty"`
	Errno  int      `json:"errno,omitempty"`
}

// usernsOp runs check c in a child of the probe's own in a new user and mount namespace where the
// command is root (unshare -rm), the check's step and its operation both there. Where no such
// namespace can be made, the operation is tried as the command, as the privilege steps are tried
// whatever their result: a sandbox that lost its protection is caught either way.
//
// The namespace is asked of clone(2) first, then of clone3(2): a seccomp filter that refuses the
// namespace flags in clone's register cannot read them in clone3's struct, and must refuse clone3
// as a whole (ENOSYS) for the refusal to hold.
func usernsOp(c FSCheck, r *FSResult) error {
	b, _ := json.Marshal(c)
	rep, err := usernsRun(string(b), false)
	via := ""
	if err != nil {
		rep, err = usernsRun(string(b), true)
		via = "clone3 (clone refused): "
	}
	if err != nil {
		c.Privileged = ""
		opErr := fsOp(c, r)
		r.Privileged = fmt.Sprintf("no user namespace of its own (%v): the operation tried as the command", err)
		return opErr
	}
	// The check's own name and path: the child went through a view of its own, which the host
	// does not have (what escaped is at the path).
	name, path := r.Name, r.Path
	*r = rep.Result
	r.Name, r.Path, r.Privileged = name, path, via+rep.Result.Privileged
	switch {
	case rep.Errno != 0:
		return fmt.Errorf("%s: %w", rep.Err, syscall.Errno(rep.Errno))
	case rep.Err != "":
		return errors.New(rep.Err)
	}
	return nil
}

// usernsRun starts the child in a new user and mount namespace, by clone3 when asked (Go's fork
// takes clone3 for a child that also gets a time namespace of its own, which clone(2) cannot
// make: Linux 5.6 and later), and reads its report.
func usernsRun(check string, clone3 bool) (usernsReport, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe", usernsArg, check)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if clone3 {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWTIME
	}
	out, err := cmd.Output()
	var rep usernsReport
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return rep, fmt.Errorf("the child's report: %w", err)
	}
	return rep, nil
}

// usernsChild is the child's side: the step, then the operation through the path it gives, the
// report on stdout.
func usernsChild(raw string) int {
	var c FSCheck
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		fmt.Fprintln(os.Stderr, "userns check:", err)
		return 2
	}
	path, said := privilege.UsernsStep(c.Privileged, c.Path)
	c.Privileged, c.Path = "", path
	var rep usernsReport
	if err := fsOp(c, &rep.Result); err != nil {
		rep.Err = err.Error()
		var en syscall.Errno
		if errors.As(err, &en) {
			rep.Errno = int(en)
		}
	}
	rep.Result.Privileged = "in a user namespace of its own, as root there: " + said
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}
