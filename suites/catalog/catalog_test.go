package catalog

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// fake is a target with the capabilities, reach and seams a test gives it.
type fake struct {
	name  string
	caps  []model.Capability
	reach []string
	seams []model.Seam
}

func (f fake) Name() string                                          { return f.name }
func (f fake) Capabilities() []model.Capability                      { return f.caps }
func (f fake) Reach() []string                                       { return f.reach }
func (f fake) Prepare(*targets.Session) (*targets.Invocation, error) { return nil, nil }
func (f fake) Version() string                                       { return "1" }
func (f fake) Seams() []model.Seam                                   { return f.seams }

// Lacks is what the specs' not-applicable verdicts say, so it must name every need unmet, and
// nothing when all are met.
func TestNeedsLacks(t *testing.T) {
	proxy := fake{name: "p", caps: []model.Capability{model.CapProxyAllowList, model.CapDenyRead}, reach: []string{"http"},
		seams: []model.Seam{model.HelperTool("socat")}}
	denyAll := fake{name: "d", caps: []model.Capability{model.CapDenyAllNet}}
	for _, c := range []struct {
		needs Needs
		t     targets.Target
		want  string // "" met; else a part of the words
	}{
		{Needs{}, denyAll, ""},
		{Capability(model.CapDenyRead), proxy, ""},
		{Capability(model.CapDenyRead), denyAll, "d: it does not claim deny-read"},
		{Needs{AllowList: true}, proxy, ""},
		{Needs{AllowList: true}, denyAll, "deny-all"},
		{Needs{Target: "p"}, proxy, ""},
		{Needs{Target: "p"}, denyAll, "it is not p"},
		{Needs{Seams: []model.Seam{model.HelperTool("socat")}}, proxy, ""},
		{Needs{Seams: []model.Seam{model.HelperTool("socat")}}, denyAll, "does not offer helper:socat"},
		{Needs{Capabilities: []model.Capability{model.CapPortRules}, AllowList: true}, denyAll, "port-rules; it is a deny-all"},
	} {
		got := c.needs.Lacks(c.t)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v on %s: %q, want %q", c.needs, c.t.Name(), got, c.want)
		}
	}
}

func TestComplete(t *testing.T) {
	knownfindings.DeclareAggregate("fam/all", "the checks")
	set := knownfindings.Set{
		"b": {Findings: []knownfindings.Finding{{ID: "b:fam/one#x", Target: "b", Scenario: "fam/one", Outcome: model.NonEnforcing}}},
		"a": {Findings: []knownfindings.Finding{{ID: "a:fam/one#y", Target: "a", Scenario: "fam/one", Outcome: model.ProxyDead},
			{ID: "a:fam/one#x", Target: "a", Scenario: "fam/one", Outcome: model.ProxyDead, Intermittent: true}}},
	}
	got := Complete([]Scenario{{ID: "fam/all", Labels: []string{"fam", "x", "fam"}}, {ID: "fam/one"}}, set)
	if !got[0].Aggregate || got[1].Aggregate || got[0].Family != "fam" {
		t.Errorf("aggregate or family: %+v", got)
	}
	if strings.Join(got[0].Labels, ",") != "fam,x" {
		t.Errorf("labels %v, want fam,x (as Ginkgo unites them)", got[0].Labels)
	}
	var ids []string
	for _, f := range got[1].Findings {
		ids = append(ids, f.ID)
	}
	if strings.Join(ids, " ") != "a:fam/one#x a:fam/one#y b:fam/one#x" {
		t.Errorf("findings %v, want by target then id", ids)
	}
	if got[0].Findings == nil || got[0].KnownBads == nil {
		t.Error("none is an empty list, not null, in --json")
	}
}

func TestKnownBadString(t *testing.T) {
	for kb, want := range map[KnownBad]string{
		{Fault: "bad-proxy", Target: "srt", Expect: model.NonEnforcing}:                "bad-proxy on srt: non-enforcing",
		{Fault: "degraded-no-proxy", Target: "srt"}:                                    "degraded-no-proxy on srt: flagged",
		{Fault: "fs-rw-root", Target: "srt", User: "root", Expect: model.NonEnforcing}: "fs-rw-root on srt as root: non-enforcing",
		{Fault: "bridge-flaky", Expect: model.ProxyDead, Rate: true}:                   "bridge-flaky: proxy-dead at rate p",
	} {
		if got := kb.String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
