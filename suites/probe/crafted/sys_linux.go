//go:build linux

package crafted

// The raw requests that need system calls Go's net package does not make: an ICMP echo, a
// socket and a connect submitted through io_uring (which a seccomp filter on socket(2) never
// sees), and TIOCSTI, which pushes bytes into a terminal's input queue.

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/suites/probe/crafted/uring"
	"github.com/sandcheck/sandcheck/suites/probe/errno"
)

// icmpEcho sends one echo request carrying the payload, through a ping socket where the kernel
// allows one, else a raw socket, and waits for the reply.
func icmpEcho(s spec, r Request, res *Result) {
	dst, err := netip.ParseAddr(r.Addr)
	if err != nil || !dst.Is4() {
		res.Skipped = "icmp needs an IPv4 address, not " + r.Addr
		return
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	raw := false
	if err != nil {
		var rerr error
		fd, rerr = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		if rerr != nil {
			fail(res, "socket", fmt.Errorf("ping socket: %w; raw socket: %w", err, rerr))
			res.Errno = errno.Name(rerr)
			return
		}
		raw = true
	}
	defer unix.Close(fd)
	payload := []byte(Payload(s.Nonce, r.ID))
	msg := append([]byte{8, 0, 0, 0, 0x5c, 0x5c, 0, 1}, payload...)
	binary.BigEndian.PutUint16(msg[2:], icmpChecksum(msg))
	tv := unix.NsecToTimeval(s.Timeout.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrInet4{Addr: dst.As4()}); err != nil {
		fail(res, "send", err)
		return
	}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(s.Timeout)
	for time.Now().Before(deadline) {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			fail(res, "reply", err)
			return
		}
		b := buf[:n]
		if raw && len(b) >= 20 {
			b = b[int(b[0]&0x0f)*4:] // a raw socket hands over the IP header too
		}
		if len(b) >= 8 && b[0] == 0 && strings.Contains(string(b[8:]), string(payload)) {
			res.Connected, res.Body = true, "echo reply"
			return
		}
	}
	res.Stage, res.Err = "reply", "no echo reply"
}

func icmpChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// uringRequest makes the socket and the connection through io_uring, then exchanges the
// case's payload (unix) or GET (TCP) over the descriptor with plain reads and writes.
func uringRequest(s spec, r Request, res *Result) {
	u, err := uring.New()
	if err != nil {
		fail(res, "setup", err)
		return
	}
	defer u.Close()
	var domain int
	var sa []byte
	if r.Via == ViaUringUnix {
		domain, sa = unix.AF_UNIX, sockaddrUnix(r.Addr)
	} else {
		ap, err := netip.ParseAddrPort(r.Addr)
		if err != nil {
			res.Skipped = "uring-tcp needs ip:port, not " + r.Addr
			return
		}
		domain, sa = sockaddrInet(ap)
	}
	fd, err := u.Submit(uring.OpSocket, int32(domain), 0, 0, unix.SOCK_STREAM)
	if err == nil && fd < 0 {
		err = syscall.Errno(-fd)
	}
	if err != nil {
		fail(res, "socket", fmt.Errorf("IORING_OP_SOCKET: %w", err))
		return
	}
	defer unix.Close(int(fd))
	rc, err := u.Submit(uring.OpConnect, fd, uintptr(unsafe.Pointer(&sa[0])), 0, uint64(len(sa)))
	runtime.KeepAlive(sa)
	if err == nil && rc < 0 {
		err = syscall.Errno(-rc)
	}
	if err != nil {
		fail(res, "connect", fmt.Errorf("IORING_OP_CONNECT: %w", err))
		return
	}
	res.Connected = true
	// Timeouts by socket option: an os.File over fd would close it again, collected, under another.
	tv := unix.NsecToTimeval(s.Timeout.Nanoseconds())
	unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	msg := Payload(s.Nonce, r.ID) + "\n"
	if r.Via == ViaUringTCP {
		msg = fmt.Sprintf("GET %s HTTP/1.0\r\nHost: sandcheck\r\n\r\n", BypassPath(s.Nonce, r.ID))
	}
	if _, err := unix.Write(int(fd), []byte(msg)); err != nil {
		fail(res, "send", err)
		return
	}
	buf := make([]byte, bodyLimit)
	var got []byte
	for len(got) < bodyLimit {
		n, err := unix.Read(int(fd), buf)
		if n <= 0 || err != nil {
			break
		}
		got = append(got, buf[:n]...)
	}
	res.Body = string(got)
}

func sockaddrUnix(path string) []byte {
	b := make([]byte, 2, 2+len(path)+1)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	if strings.HasPrefix(path, "@") {
		return append(append(b, 0), path[1:]...) // abstract: a leading NUL, no terminator
	}
	return append(append(b, path...), 0)
}

func sockaddrInet(ap netip.AddrPort) (int, []byte) {
	if ap.Addr().Is4() {
		b := make([]byte, 16)
		binary.NativeEndian.PutUint16(b, unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As4()
		copy(b[4:], a[:])
		return unix.AF_INET, b
	}
	b := make([]byte, 28)
	binary.NativeEndian.PutUint16(b, unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().As16()
	copy(b[8:], a[:])
	return unix.AF_INET6, b
}

// tiocsti pushes the payload, byte by byte, into the input of the terminal on fd 0, else of
// the controlling terminal (/dev/tty): what a shell reading that terminal after the sandboxed
// command exits would run.
func tiocsti(s spec, r Request, res *Result) {
	payload := []byte(Payload(s.Nonce, r.ID))
	push := func(fd int) error {
		for i := range payload {
			if _, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&payload[i]))); en != 0 {
				return en
			}
		}
		return nil
	}
	err0 := push(0)
	if err0 == nil {
		res.Connected, res.Body = true, "pushed into fd 0"
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fail(res, "tty", fmt.Errorf("fd 0: TIOCSTI: %w; /dev/tty: %w", err0, err))
		res.Errno = errno.Name(err0)
		return
	}
	defer tty.Close()
	if err := push(int(tty.Fd())); err != nil {
		fail(res, "ioctl", fmt.Errorf("fd 0: TIOCSTI: %w; /dev/tty: TIOCSTI: %w", err0, err))
		return
	}
	res.Connected, res.Body = true, "pushed into /dev/tty"
}
