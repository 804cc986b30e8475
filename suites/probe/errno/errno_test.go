package errno

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestName(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}, "ECONNREFUSED"},
		{fmt.Errorf("rename: %w", syscall.EXDEV), "EXDEV"},
		{fmt.Errorf("fd 0: TIOCSTI: %w; /dev/tty: TIOCSTI: %w", syscall.EIO, syscall.EIO), "EIO"},
		{os.ErrDeadlineExceeded, "ETIMEDOUT"},
		// Only the text of the cause is left (net.DNSError keeps it so).
		{errors.New("lookup x: " + syscall.ENETUNREACH.Error()), "ENETUNREACH"},
		{syscall.Errno(0x7fff), fmt.Sprintf("errno-%d", 0x7fff)},
		{errors.New("no errno here"), ""},
	} {
		if got := Name(c.err); got != c.want {
			t.Errorf("Name(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
