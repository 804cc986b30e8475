package specreport

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/model"
)

// spec is a Ginkgo spec report as it reaches the runner: the value goes through JSON, as in a
// report file.
func spec(t *testing.T, state types.SpecState, v Verdict) types.SpecReport {
	t.Helper()
	e := types.ReportEntry{Name: EntryScenario, Value: types.WrapEntryValue(v)}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back types.ReportEntry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, State: state, ReportEntries: types.ReportEntries{back}}
}

// Breaches, Known and Unreproduced reach the journal's scenarios; the trial's hint leads with a
// failure no known finding covers.
func TestFromReportsCarriesBreachesAndKnown(t *testing.T) {
	known := Verdict{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Hint: "hooks planted",
		Breaches: []string{"write $WORKSPACE/newrepo/.git/hooks/pre-commit"}, Known: "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"}
	fresh := Verdict{Name: "filesystem/secret/read", Outcome: model.NonEnforcing, Hint: "secret read",
		Breaches: []string{"read $TRIAL/home/.ssh/id_rsa"}}
	fixed := Verdict{Name: "failclosed/proxy-port-taken", Outcome: model.SandboxFailed, Pass: true,
		Unreproduced: "srt:failclosed/proxy-port-taken#proxy-port-taken"}
	tr := FromReports([]types.Report{{SpecReports: types.SpecReports{
		spec(t, types.SpecStateSkipped, known), spec(t, types.SpecStateFailed, fresh), spec(t, types.SpecStatePassed, fixed)}}})
	if len(tr.Scenarios) != 3 {
		t.Fatalf("scenarios: %+v", tr.Scenarios)
	}
	k, f, x := tr.Scenarios[0], tr.Scenarios[1], tr.Scenarios[2]
	if k.Known != known.Known || !reflect.DeepEqual(k.Breaches, known.Breaches) || k.Pass {
		t.Errorf("known: %+v", k)
	}
	if f.Known != "" || !reflect.DeepEqual(f.Breaches, fresh.Breaches) {
		t.Errorf("new: %+v", f)
	}
	if x.Unreproduced != fixed.Unreproduced || !x.Pass {
		t.Errorf("unreproduced: %+v", x)
	}
	if tr.Outcome != model.NonEnforcing || tr.Hint != "secret read" {
		t.Errorf("trial: %s %q, want non-enforcing led by the new failure", tr.Outcome, tr.Hint)
	}
}
