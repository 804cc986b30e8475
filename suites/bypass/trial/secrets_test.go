package trial

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// A case that takes secrets to the allowed host is judged by what the allowed host's log says
// the request carried: the declared secret in clear is a breach, whatever the client saw; the
// undeclared canary missing makes the secret's absence no proof.
func TestClassifyCarriedSecrets(t *testing.T) {
	sc := Case{Name: "bypass/secrets/env-deny", AllowedOK: true, MustCarry: []string{"open-env"}, MustNotCarry: []string{"deny-env"},
		Raw: crafted.Request{ID: "secrets.env-deny", Via: crafted.ViaHTTP, Host: "allowed.sandcheck.test", Port: 80,
			Carry: []string{"env:CANARY_OPEN_TOKEN", "env:CANARY_API_KEY"}}}
	okCtl := reached("control-http", crafted.ViaHTTP, "tokA")
	ctlHit := logged(model.RoleAllowed, "control-http")
	got := reached("secrets.env-deny", crafted.ViaHTTP, "tokA")
	got.CarryRead = []string{"env:CANARY_OPEN_TOKEN: 30 bytes", "env:CANARY_API_KEY: not set"}
	carrying := func(names ...string) model.Hit {
		h := logged(model.RoleAllowed, "secrets.env-deny")
		h.Carried = strings.Join(names, ", ")
		return h
	}
	cases := []struct {
		name string
		hits []model.Hit
		want model.Outcome
		hint string
	}{
		{"the undeclared canary arrived, the declared one did not", []model.Hit{ctlHit, carrying("open-env")}, model.Correct, "without deny-env"},
		{"the declared canary arrived in clear", []model.Hit{ctlHit, carrying("deny-env", "open-env")}, model.NonEnforcing, "real value of deny-env"},
		{"the undeclared canary did not arrive: no proof", []model.Hit{ctlHit, carrying()}, model.HarnessError, "without open-env"},
		{"the request never reached the allowed host", []model.Hit{ctlHit}, model.AllowedBlocked, "did not reach"},
		{"a hit that names no case but carries the secret is blamed on it",
			[]model.Hit{ctlHit, carrying("open-env"), {Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/elsewhere", Carried: "deny-env"}},
			model.NonEnforcing, "no request names"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Classify(bin([]Case{ctl(crafted.ViaHTTP), sc}, []crafted.Result{okCtl, got}, c.hits...))
			cr := r.Cases[sc.Name]
			if cr.Outcome != c.want || !strings.Contains(cr.Hint, c.hint) {
				t.Errorf("%s (%s), want %s with %q", cr.Outcome, cr.Hint, c.want, c.hint)
			}
			if c.want == model.NonEnforcing && len(cr.Egress) == 0 {
				t.Errorf("a breach names no evidence: %+v", cr)
			}
		})
	}
	// A carried secret is no concern of a case that does not hold it.
	other := bcase("bypass/m/nul", "nul", crafted.ViaHTTP)
	r := Classify(bin([]Case{ctl(crafted.ViaHTTP), other}, []crafted.Result{okCtl, refused("nul", crafted.ViaHTTP)}, ctlHit,
		model.Hit{Role: model.RoleAllowed, Proto: model.ProtoHTTP, Path: "/elsewhere", Carried: "deny-env"}))
	if o := r.Cases[other.Name].Outcome; o != model.Correct {
		t.Errorf("a case without secrets: %s (%s)", o, r.Cases[other.Name].Hint)
	}
}
