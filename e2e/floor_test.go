package e2e

import (
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// TestFloorShort: a bare loop is a floor only if it did a trial's work. Every run's request on the
// allowed host is one; egress anywhere, or fewer than half the runs, is no floor; a few runs short
// are counted, so the bench can say the floor is that much low.
func TestFloorShort(t *testing.T) {
	allowed := model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/bench"}
	other := model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/elsewhere"}
	denied := model.Hit{Role: model.RoleDenied, Proto: model.ProtoHTTP, Path: "/bench"}
	rep := func(h model.Hit, n int) []model.Hit {
		var out []model.Hit
		for range n {
			out = append(out, h)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		hits  []model.Hit
		short int
		fails bool
	}{
		{"every run reached the allowed host", rep(allowed, 4), 0, false},
		{"one start failed", rep(allowed, 3), 1, false},
		{"half failed", rep(allowed, 2), 2, false},
		{"most failed", rep(allowed, 1), 3, true},
		{"the command never ran (a refusal)", nil, 4, true},
		{"other paths do not count", append(rep(other, 4), allowed), 3, true},
		{"egress is no floor", append(rep(allowed, 4), denied), 0, true},
	} {
		short, err := floorShort(c.hits, "/bench", 4)
		if (err != nil) != c.fails || short != c.short {
			t.Errorf("%s: short %d, err %v; want short %d, failing %v", c.name, short, err, c.short, c.fails)
		}
	}
}
