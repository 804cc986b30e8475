package badproxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
)

// TestAdminReplacesPolicyOnlyWhenBugged: an origin-form PUT /config on the proxy's own port
// replaces the policy under BugAdmin, and is a bad request without it.
func TestAdminReplacesPolicyOnlyWhenBugged(t *testing.T) {
	for _, bugged := range []bool{false, true} {
		p, err := Start(Options{Bugs: map[string]bool{BugAdmin: bugged}})
		if err != nil {
			t.Fatal(err)
		}
		p.SetPolicy([]string{"allowed.x"}, nil)
		body := `{"allowed_domains":["denied.x"],"denied_domains":[]}`
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p.HTTPPort))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "PUT /config HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		allowsDenied := p.policy.Decide("denied.x", 80).Allow
		p.mu.Unlock()
		p.Close()
		if want := map[bool]int{false: 400, true: 200}[bugged]; resp.StatusCode != want || allowsDenied != bugged {
			t.Errorf("bug admin %v: status %d (want %d), denied.x allowed after: %v", bugged, resp.StatusCode, want, allowsDenied)
		}
	}
}
