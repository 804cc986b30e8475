package crafted

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A request takes each carry source's value along in a header of its own, a file's lines joined;
// what reading found is reported by length or error, never by value.
func TestCarry(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CANARY_T_KEY", "key-123")
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine a\npassword p-456\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan http.Header, 1)
	proxyAt(t, func(r *http.Request) { got <- r.Header })

	res := Send(Request{ID: "s.c", Via: ViaHTTP, Host: "allowed.sandcheck.test", Port: 80,
		Carry: []string{CarryEnv + "CANARY_T_KEY", CarryFile + "~/.netrc", CarryEnv + "CANARY_T_UNSET"}}, "n0nce", 3*time.Second)
	h := <-got
	if res.Status != 200 || h.Get(CarryHeader+"1") != "key-123" || h.Get(CarryHeader+"2") != "machine a password p-456" || h.Get(CarryHeader+"3") != "" {
		t.Fatalf("result %+v, headers %v", res, h)
	}
	read := strings.Join(res.CarryRead, "|")
	if !strings.Contains(read, "CANARY_T_KEY: 7 bytes") || !strings.Contains(read, "CANARY_T_UNSET: not set") ||
		strings.Contains(read, "key-123") {
		t.Errorf("carry read: %s", read)
	}
}
