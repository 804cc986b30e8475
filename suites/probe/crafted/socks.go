package crafted

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"net/url"
)

// socksConnect speaks SOCKS5 (RFC 1928, RFC 1929 for the credentials) to p.
func socksConnect(s spec, r Request, p *url.URL, res *Result) {
	c := dialProxy(s, p, res)
	if c == nil {
		return
	}
	defer c.Close()
	user, pass := "", ""
	if p.User != nil && !r.NoAuth {
		user = p.User.Username()
		pass, _ = p.User.Password()
	}
	methods := []byte{0}
	if user != "" {
		methods = []byte{0, 2}
	}
	br := bufio.NewReader(c)
	c.Write(append([]byte{5, byte(len(methods))}, methods...))
	var sel [2]byte
	if _, err := io.ReadFull(br, sel[:]); err != nil {
		fail(res, "handshake", err)
		return
	}
	switch sel[1] {
	case 0:
	case 2:
		c.Write(append(append(append([]byte{1, byte(len(user))}, user...), byte(len(pass))), pass...))
		var st [2]byte
		if _, err := io.ReadFull(br, st[:]); err != nil {
			fail(res, "handshake", err)
			return
		}
		if st[1] != 0 {
			res.Stage, res.Err = "handshake", fmt.Sprintf("SOCKS5 authentication refused (status %d)", st[1])
			return
		}
	default:
		res.Stage, res.Err = "handshake", fmt.Sprintf("SOCKS5 proxy accepts none of the offered methods (selected %d)", sel[1])
		return
	}
	req, err := socksRequest(r)
	if err != nil {
		res.Stage, res.Err = "request", err.Error()
		return
	}
	c.Write(req)
	var rep [4]byte
	if _, err := io.ReadFull(br, rep[:]); err != nil {
		fail(res, "reply", err)
		return
	}
	res.Reply = int(rep[1])
	var skip int
	switch rep[3] {
	case 1:
		skip = 4 + 2
	case 4:
		skip = 16 + 2
	case 3:
		l, _ := br.ReadByte()
		skip = int(l) + 2
	}
	if _, err := io.CopyN(io.Discard, br, int64(skip)); err != nil {
		fail(res, "reply", err)
		return
	}
	if rep[1] != 0 {
		res.Stage, res.Err = "reply", fmt.Sprintf("SOCKS5 reply %d", rep[1])
		return
	}
	tunnelGetBuffered(s, r, c, br, res)
}

// socksRequest is the CONNECT request for r: the name's bytes as they are, whatever they hold
// (a name over 255 bytes cannot be said in SOCKS5 and is refused here).
func socksRequest(r Request) ([]byte, error) {
	req := []byte{5, 1, 0}
	switch r.ATYP {
	case 0, 3:
		if len(r.Host) > 255 {
			return nil, fmt.Errorf("a SOCKS5 name has at most 255 bytes, this one %d", len(r.Host))
		}
		req = append(append(req, 3, byte(len(r.Host))), r.Host...)
	case 1, 4:
		a, err := netip.ParseAddr(r.Host)
		if err != nil {
			return nil, err
		}
		if r.ATYP == 1 {
			b := a.As4()
			req = append(append(req, 1), b[:]...)
		} else {
			b := a.As16()
			req = append(append(req, 4), b[:]...)
		}
	default:
		return nil, fmt.Errorf("unknown SOCKS5 address type %d", r.ATYP)
	}
	return binary.BigEndian.AppendUint16(req, uint16(r.Port)), nil
}
