package orchestrate

import (
	"errors"
	"slices"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets"
)

// reachTarget is a target whose only use here is its reach.
type reachTarget struct{ reach []string }

func (reachTarget) Name() string                     { return "reach-test" }
func (reachTarget) Capabilities() []model.Capability { return nil }
func (t reachTarget) Reach() []string                { return t.reach }
func (reachTarget) Prepare(*targets.Session) (*targets.Invocation, error) {
	return nil, errors.New("not here")
}
func (reachTarget) Version() string { return "test" }

func init() {
	targets.Register("reach-test-proxy", func(map[string]string) (targets.Target, error) {
		return reachTarget{[]string{model.ChanHTTP, model.ChanSOCKS}}, nil
	})
	targets.Register("reach-test-denyall", func(map[string]string) (targets.Target, error) { return reachTarget{}, nil })
	targets.Register("reach-test-needs-settings", func(map[string]string) (targets.Target, error) {
		return nil, errors.New("settings.argv is required")
	})
}

// TestNetworkPolicies: each cell's network policy is its target's reach; a deny-all target's is
// empty, not missing; a target whose adapter cannot load without its settings, or that is not
// linked in, has none, so the truth table says it does not know rather than guess.
func TestNetworkPolicies(t *testing.T) {
	rep := &schema.Report{}
	for _, name := range []string{"reach-test-proxy", "reach-test-denyall", "reach-test-needs-settings", "not-a-target"} {
		rep.Overall = append(rep.Overall, schema.Overall{CellRef: schema.CellRef{CellID: name, Target: name}})
	}
	networkPolicies(rep)
	got := map[string]*schema.NetworkPolicy{}
	for _, o := range rep.Overall {
		got[o.Target] = o.Network
	}
	if p := got["reach-test-proxy"]; p == nil || !slices.Equal(p.Reach, []string{model.ChanHTTP, model.ChanSOCKS}) {
		t.Errorf("proxy target: %+v", p)
	}
	if p := got["reach-test-denyall"]; p == nil || p.Reach == nil || len(p.Reach) != 0 {
		t.Errorf("deny-all target: %+v, want an empty reach", p)
	}
	for _, name := range []string{"reach-test-needs-settings", "not-a-target"} {
		if p := got[name]; p != nil {
			t.Errorf("%s: %+v, want no policy", name, p)
		}
	}
}
