//go:build linux

// Package netlink is a netlink socket that sends one request at a time and collects its
// replies: what the fixtures' rtnetlink requests and the probe's sock_diag dump share.
package netlink

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is a netlink socket of one protocol, in the network namespace of the thread that opened it.
type Conn struct {
	fd  int
	seq uint32
}

// Dial opens a netlink socket of protocol (unix.NETLINK_ROUTE, unix.NETLINK_SOCK_DIAG, ...) in
// the network namespace of the calling thread.
func Dial(protocol int) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, protocol)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	return &Conn{fd: fd}, nil
}

// Close closes the socket.
func (c *Conn) Close() { unix.Close(c.fd) }

// Exchange sends one request and returns the replies that came before its end: the kernel's
// acknowledgement (NLM_F_ACK is always asked for) or, for a dump (NLM_F_DUMP), NLMSG_DONE. An
// error the kernel answers is returned as its errno.
func (c *Conn) Exchange(typ uint16, flags uint16, body []byte) ([]syscall.NetlinkMessage, error) {
	c.seq++
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], c.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(c.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var replies []syscall.NetlinkMessage
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch {
			case m.Header.Seq != c.seq: // a late answer to an earlier request
				continue
			case m.Header.Type == unix.NLMSG_DONE:
				return replies, nil
			case m.Header.Type != unix.NLMSG_ERROR:
				m.Data = append([]byte(nil), m.Data...) // buf is read into again
				replies = append(replies, m)
				continue
			}
			if len(m.Data) < 4 {
				return nil, fmt.Errorf("netlink: short error message")
			}
			if code := int32(binary.NativeEndian.Uint32(m.Data[:4])); code != 0 {
				return nil, unix.Errno(-code)
			}
			return replies, nil
		}
	}
}
