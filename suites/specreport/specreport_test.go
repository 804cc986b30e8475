package specreport

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/model"
)

// spec is a Ginkgo spec report carrying v: through JSON, as in a report file, or as the value
// itself, as a report taken in process holds it.
func spec(t *testing.T, state types.SpecState, v model.Scenario, viaJSON bool) types.SpecReport {
	t.Helper()
	e := types.ReportEntry{Name: EntryScenario, Value: types.WrapEntryValue(v)}
	if viaJSON {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back types.ReportEntry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		e = back
	}
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, State: state, ReportEntries: types.ReportEntries{e}}
}

// Typed breaches, with their findings and egress, and Unreproduced reach the trial's verdicts
// unchanged, in process and through a report file alike; the trial's hint leads with a failure
// no known finding covers.
func TestFromReportsCarriesVerdicts(t *testing.T) {
	known := model.Scenario{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Hint: "hooks planted",
		Breaches: []model.Breach{{Scenario: "filesystem/protected/git-hooks-new-repo", Check: "$WORKSPACE/newrepo/.git/hooks/pre-commit",
			Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit",
			Known: "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"}}}
	fresh := model.Scenario{Name: "network/channel/dns", Outcome: model.NonEnforcing, Hint: "denied reached",
		Breaches: []model.Breach{{Scenario: "network/channel/dns", Check: "dns:denied", Outcome: model.NonEnforcing,
			What: "dns: denied.sandcheck.test reached", Egress: []string{"denied dns A q-1.denied.sandcheck.test"}}}}
	fixed := model.Scenario{Name: "failclosed/proxy-port-taken", Outcome: model.SandboxFailed, Pass: true,
		Unreproduced: "srt:failclosed/proxy-port-taken#proxy-port-taken"}
	for _, viaJSON := range []bool{false, true} {
		tr := FromReports([]types.Report{{SpecReports: types.SpecReports{
			spec(t, types.SpecStateSkipped, known, viaJSON), spec(t, types.SpecStateFailed, fresh, viaJSON), spec(t, types.SpecStatePassed, fixed, viaJSON)}}})
		if len(tr.Scenarios) != 3 {
			t.Fatalf("json %v: scenarios: %+v", viaJSON, tr.Scenarios)
		}
		for i, want := range []model.Scenario{known, fresh, fixed} {
			if got := tr.Scenarios[i]; !reflect.DeepEqual(got, want) {
				t.Errorf("json %v: verdict %d:\n got %+v\nwant %+v", viaJSON, i, got, want)
			}
		}
		if tr.Outcome != model.NonEnforcing || tr.Hint != "denied reached" {
			t.Errorf("json %v: trial: %s %q, want non-enforcing led by the new failure", viaJSON, tr.Outcome, tr.Hint)
		}
	}
}

// A trial in which no scenario could be judged is not-applicable, never correct: nothing was
// measured.
func TestFromReportsAllNotApplicable(t *testing.T) {
	na := func(name string) model.Scenario {
		return model.Scenario{Name: name, Outcome: model.NotApplicable, Pass: true, Hint: "command does not claim deny-read"}
	}
	tr := FromReports([]types.Report{{SpecReports: types.SpecReports{
		spec(t, types.SpecStateSkipped, na("filesystem/secret/read"), false), spec(t, types.SpecStateSkipped, na("filesystem/secret/proc-root"), false)}}})
	if tr.Outcome != model.NotApplicable {
		t.Errorf("all not-applicable: trial outcome %s (%q), want not-applicable", tr.Outcome, tr.Hint)
	}
}
