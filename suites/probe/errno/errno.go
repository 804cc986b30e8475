// Package errno names the system error behind a Go error ("ECONNREFUSED", "EROFS"), so the
// probe reports errno by errno what the sandbox refused, whichever way the request went.
package errno

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// Name is the errno behind err: its symbolic name, "errno-N" for one without a name here,
// ETIMEDOUT for a deadline, "" when err carries none.
func Name(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if n := names[en]; n != "" {
			return n
		}
		return fmt.Sprintf("errno-%d", int(en))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "ETIMEDOUT"
	}
	// Some wrappers (net.DNSError) keep only the text of the cause.
	for en, name := range names {
		if strings.Contains(err.Error(), en.Error()) {
			return name
		}
	}
	return ""
}

var names = map[syscall.Errno]string{
	syscall.ECONNREFUSED: "ECONNREFUSED", syscall.ENETUNREACH: "ENETUNREACH", syscall.EHOSTUNREACH: "EHOSTUNREACH",
	syscall.ETIMEDOUT: "ETIMEDOUT", syscall.ECONNRESET: "ECONNRESET", syscall.EPERM: "EPERM", syscall.EACCES: "EACCES",
	syscall.EROFS: "EROFS", syscall.ENOENT: "ENOENT", syscall.EADDRNOTAVAIL: "EADDRNOTAVAIL", syscall.EAFNOSUPPORT: "EAFNOSUPPORT",
	// Filesystem errnos matter as much as network ones: EROFS says "read-only bind", EACCES and
	// EPERM say "permission", EXDEV says "crossed a mount boundary".
	syscall.EXDEV: "EXDEV", syscall.EISDIR: "EISDIR", syscall.ENOTDIR: "ENOTDIR", syscall.ENXIO: "ENXIO",
	syscall.ELOOP: "ELOOP",
	syscall.EBUSY: "EBUSY", // a mount point: a masked path cannot be moved or removed
	syscall.EIO:   "EIO",   // TIOCSTI where the kernel turned legacy TIOCSTI off (dev.tty.legacy_tiocsti=0)
	// What a limit answers: no more processes, memory, room or file size.
	syscall.EAGAIN: "EAGAIN", syscall.ENOMEM: "ENOMEM", syscall.ENOSPC: "ENOSPC", syscall.EFBIG: "EFBIG",
	syscall.EDQUOT:  "EDQUOT",
	syscall.ETXTBSY: "ETXTBSY", // a write into a running program's own file
}
