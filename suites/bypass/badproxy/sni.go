package badproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/fixtures/proxywire"
)

// serverName reads the SNI name of a TLS ClientHello waiting in br, without consuming it: the
// record is peeked, and crypto/tls parses it as a server would, stopping once it has the name.
func serverName(br *bufio.Reader) (string, bool) {
	head, err := br.Peek(5)
	if err != nil || head[0] != 22 { // a handshake record
		return "", false
	}
	rec, err := br.Peek(5 + int(binary.BigEndian.Uint16(head[3:5])))
	if err != nil {
		return "", false
	}
	var name string
	stop := errors.New("read the ClientHello")
	tls.Server(&replayConn{r: bytes.NewReader(rec)}, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		name = h.ServerName
		return nil, stop
	}}).Handshake()
	return name, name != ""
}

// absoluteTarget is the authority of the absolute-URI request line waiting in br
// ("GET http://HOST:PORT/... HTTP/1.1"), without consuming it: what the client sent first in a
// plaintext tunnel.
func absoluteTarget(br *bufio.Reader) (string, bool) {
	target, _, ok := proxywire.PeekRequestLine(br)
	if !ok {
		return "", false
	}
	rest, ok := strings.CutPrefix(target, "http://")
	if !ok {
		return "", false
	}
	authority, _, _ := strings.Cut(rest, "/")
	return authority, authority != ""
}

// replayConn serves recorded bytes to a TLS server and swallows what it answers.
type replayConn struct{ r *bytes.Reader }

func (c *replayConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *replayConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }
