//go:build linux

package privilege

import (
	"math/big"
	"strings"
	"testing"
)

// TestLooserMeansLessConfined: a process is looser than the command when it runs without the
// seccomp filter the command has, or holds a capability the command lacks; the same
// confinement, or more, is not.
func TestLooserMeansLessConfined(t *testing.T) {
	caps := func(hex string) *big.Int { v, _ := new(big.Int).SetString(hex, 16); return v }
	filtered := confinement{seccomp: 2, capEff: caps("0")}
	for _, c := range []struct {
		name        string
		self, other confinement
		want        bool
	}{
		{"unfiltered helper", filtered, confinement{seccomp: 0, capEff: caps("0")}, true},
		{"helper with capabilities", filtered, confinement{seccomp: 2, capEff: caps("1ffffffffff")}, true},
		{"a sibling as confined", filtered, filtered, false},
		{"both unfiltered, no capabilities", confinement{capEff: caps("0")}, confinement{capEff: caps("0")}, false},
		{"fewer capabilities", confinement{capEff: caps("ff")}, confinement{capEff: caps("0f")}, false},
	} {
		if got := c.self.looser(c.other); got != c.want {
			t.Errorf("%s: looser = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPtraceControlTracesItsOwnChild: the control run ptraces the probe's own child, which shows
// whether ptrace works for this user at all.
func TestPtraceControlTracesItsOwnChild(t *testing.T) {
	data, err := Looser(true)
	if err != nil || !strings.Contains(data, "ok") {
		t.Fatalf("control: %v, %q", err, data)
	}
}
