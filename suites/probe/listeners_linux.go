package probe

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/internal/netlink"
)

// listenersDiag asks the kernel for the TCP sockets in LISTEN state over sock_diag netlink, for
// IPv4 and IPv6. A LISTEN-only dump walks only the listening hash; reading /proc/net/tcp walks
// every bucket of the established hash too, which took ~4 ms of every probe here.
func listenersDiag() ([]Listener, error) {
	nl, err := netlink.Dial(unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	defer nl.Close()
	var out []Listener
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		// struct inet_diag_req_v2: family, protocol, ext, pad, states, then the socket id.
		req := make([]byte, diagReqLen)
		req[0], req[1] = family, unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(req[4:], 1<<tcpListen)
		msgs, err := nl.Exchange(unix.SOCK_DIAG_BY_FAMILY, unix.NLM_F_DUMP, req)
		if err != nil {
			return nil, fmt.Errorf("sock_diag dump: %w", err)
		}
		for _, m := range msgs {
			// struct inet_diag_msg: family, state, timer, retrans, then the socket id (sport,
			// dport, src, dst, ...).
			if len(m.Data) < diagMsgMinLen || m.Data[1] != tcpListen {
				continue
			}
			out = append(out, Listener{Addr: diagAddr(m.Data[0], m.Data[8:24]).String(), Port: int(binary.BigEndian.Uint16(m.Data[4:6]))})
		}
	}
	return out, nil
}

// Sizes of struct inet_diag_req_v2 and of the start of inet_diag_msg (linux/inet_diag.h).
const (
	diagReqLen    = 56
	diagMsgMinLen = 4 + 48
	tcpListen     = 10 // TCP_LISTEN
)

// diagAddr is a socket's source address as inet_diag_sockid holds it (IPv4 in the first 4 bytes).
func diagAddr(family uint8, b []byte) netip.Addr {
	if family == unix.AF_INET {
		return netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrFrom16([16]byte(b[:16]))
}
