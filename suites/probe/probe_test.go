package probe

import (
	"bytes"
	"strings"
	"testing"
)

// Recorded inside srt 0.0.83: relays listening on :1080 and :3128 (tcp6, v4-mapped), plus two
// TIME_WAIT client sockets that must not count as listeners.
const procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0438 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5451 1 00000000b50560f9 100 0 0 10 0
   1: 00000000000000000000000000000000:0C38 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6285 1 0000000038d5165d 100 0 0 10 0
`
const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:AB84 0100007F:0C38 06 00000000:00000000 03:0000176C 00000000     0        0 0 3 00000000f99a5b35
`

func TestParseProcNetTCP(t *testing.T) {
	l := ParseProcNetTCP([]byte(procNetTCP6))
	if len(l) != 2 || l[0].Port != 1080 || l[1].Port != 3128 || l[0].Addr != "::" {
		t.Fatalf("tcp6 listeners = %+v", l)
	}
	if l := ParseProcNetTCP([]byte(procNetTCP)); len(l) != 0 {
		t.Fatalf("TIME_WAIT counted as listener: %+v", l)
	}
}

func TestParseHTTPKeepsOriginAfterConnect(t *testing.T) {
	out := "HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsandcheck-fixture role=allowed token=abc\n"
	var a Attempt
	parseHTTP([]byte(out), &a)
	if a.Status != 200 || !strings.Contains(a.Body, "token=abc") {
		t.Fatalf("got %+v", a)
	}
	blocked := "HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist\n"
	a = Attempt{}
	parseHTTP([]byte(blocked), &a)
	if a.Status != 403 || a.ProxyError != "blocked-by-allowlist" || !strings.Contains(a.Body, "blocked") {
		t.Fatalf("got %+v", a)
	}
}

func TestParseFindsOnlyOurNonce(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("noise from the sandbox\n" + RanMarker + " other\n")
	buf.WriteString(BeginMarker + " other\n{\"nonce\":\"other\"}\n" + EndMarker + " other\n")
	out, err := Parse(buf.Bytes(), "mine")
	if err != nil || out.Ran || out.Obs != nil {
		t.Fatalf("foreign nonce accepted: %+v %v", out, err)
	}
	buf.WriteString(RanMarker + " mine\n" + BeginMarker + " mine\n{\"nonce\":\"mine\",\"attempts\":[{\"channel\":\"http\"}]}\n" + EndMarker + " mine\n")
	out, err = Parse(buf.Bytes(), "mine")
	if err != nil || !out.Ran || out.Obs == nil || len(out.Obs.Attempts) != 1 {
		t.Fatalf("own output not found: %+v %v", out, err)
	}
}

func TestRedactHidesProxyCredentials(t *testing.T) {
	got := redact("http://srt.Zm9v:secret@localhost:3128")
	if strings.Contains(got, "secret") || !strings.Contains(got, "localhost:3128") {
		t.Fatalf("redact = %q", got)
	}
}
