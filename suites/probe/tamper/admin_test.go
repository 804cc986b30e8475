package tamper

import "testing"

// TestLocalListeners: /proc/net/tcp{,6} as the kernel writes it; the listeners on loopback,
// and on every address as their family's loopback; not a connection, not another address.
func TestLocalListeners(t *testing.T) {
	v4 := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:1F90 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0202A8C0:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
`)
	v6 := []byte(`  sl  local_address                         remote_address                        st
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1
   1: 0000000000000000FFFF00000100007F:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1
   2: 00000000000000000000000000000000:0C38 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6 1
   3: 00000000:0438 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7 1
`)
	got := append(localListeners(v4), localListeners(v6)...)
	want := []string{"127.0.0.1:3306", "[::1]:8080", "[::ffff:127.0.0.1]:22", "[::1]:3128", "127.0.0.1:1080"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("%d: %s, want %s", i, got[i], want[i])
		}
	}
}
