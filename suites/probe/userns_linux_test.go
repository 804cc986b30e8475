package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestMain lets the test binary be the probe's user-namespace child too, as the sandcheck binary
// is (MaybeRun).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == usernsArg {
		os.Exit(usernsChild(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == noCloneUsernsArg {
		os.Exit(underNoCloneUserns(os.Args[2]))
	}
	os.Exit(m.Run())
}

// noCloneUsernsArg runs one userns check under a seccomp filter that refuses unshare(2) and a
// clone(2) asking for a user namespace, as a filter that reads clone's flags does, and prints
// what the check's report says of its step.
const noCloneUsernsArg = "__sandcheck_test_no_clone_userns"

func underNoCloneUserns(path string) int {
	const (
		ldw  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	prog := []unix.SockFilter{
		{Code: ldw, K: 4},                                 // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 7, K: 0xc000003e},          // not x86_64: allow
		{Code: ldw, K: 0},                                 // seccomp_data.nr
		{Code: jeq, Jt: 4, Jf: 0, K: unix.SYS_UNSHARE},    // unshare: deny
		{Code: jeq, Jt: 0, Jf: 4, K: unix.SYS_CLONE},      // not clone: allow
		{Code: ldw, K: 16},                                // clone's flags, low half
		{Code: jset, Jt: 0, Jf: 2, K: unix.CLONE_NEWUSER}, // no new user namespace: allow
		{Code: ret, K: deny},                              //
		{Code: ret, K: deny},                              //
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},            //
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println(err)
		return 2
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Every thread of the process: the fork may come from any of them.
	if _, _, en := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fp))); en != 0 {
		fmt.Println(en)
		return 2
	}
	res := runFS([]FSCheck{{Name: "c", Op: OpAppend, Path: path, Content: "after\n", Privileged: PrivUsernsUnmount}})[0]
	fmt.Println(res.Privileged)
	return 0
}

// TestUsernsTriesClone3: where a seccomp filter refuses clone's user-namespace flag and unshare,
// the check's namespace comes from clone3, whose flags no filter can read, and its report says
// so: a sandbox that refuses user namespaces that way is caught by the checks all the same.
func TestUsernsTriesClone3(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		skip.NotApplicable(t, "the test's filter is written for x86_64")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("before\n"), 0o644)
	out, err := exec.Command(os.Args[0], noCloneUsernsArg, f).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "clone3 (clone refused): in a user namespace of its own") {
		t.Fatalf("under a filter on clone's flags: %v, %q", err, out)
	}
}

// TestUsernsCheckRunsInItsOwnNamespace: a check whose step is taken in a user namespace runs its
// operation in a child there and reports what the step did; where there is no mount to work on,
// the operation goes to the path as it is. Where no user namespace can be made, the operation is
// tried as the command and the report says so: never skipped.
func TestUsernsCheckRunsInItsOwnNamespace(t *testing.T) {
	for _, step := range []string{PrivUsernsUnmount, PrivUsernsBind, PrivUsernsOpenTree} {
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, []byte("before\n"), 0o644)
		res := runFS([]FSCheck{{Name: step, Op: OpAppend, Path: f, Content: "after\n", Privileged: step}})[0]
		got, _ := os.ReadFile(f)
		if !res.OK || string(got) != "before\nafter\n" || res.Name != step || res.Path != f {
			t.Errorf("%s: %+v, file %q", step, res, got)
		}
		if !strings.HasPrefix(res.Privileged, "in a user namespace of its own, as root there: ") && !strings.HasPrefix(res.Privileged, "no user namespace of its own") {
			t.Errorf("%s: the step's report %q", step, res.Privileged)
		}
	}
	// An error keeps its number across the child: the errno the classifier reads.
	res := runFS([]FSCheck{{Name: "missing", Op: OpRead, Path: filepath.Join(t.TempDir(), "none"), Privileged: PrivUsernsBind}})[0]
	if res.OK || res.Errno != "ENOENT" {
		t.Errorf("a missing file: %+v, want ENOENT", res)
	}
}
