package judge

import (
	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
	"github.com/sandcheck/sandcheck/suites/verdict"
)

// FSPaths spells each check's path as findings do. The paths are the ones the probe reports it
// tried (its spec, $TMPDIR expanded inside); the workspace is the policy's writable path.
func FSPaths(ft *filesystem.Trial) map[string]string {
	if ft.Observation == nil {
		return nil
	}
	var ws string
	if len(ft.Policy.WritablePaths) > 0 {
		ws = ft.Policy.WritablePaths[0]
	}
	return verdict.FSPathsHome(ft.Observation.FS, ws, ft.Home())
}

// FSCheck judges one check of a filesystem trial as the spec of its own scenario: the whole
// trial's outcome when the check was never judged, not-applicable when the check says so, else
// the check's outcome, breaching path (spelled as findings spell it) when it fails.
func FSCheck(ft *filesystem.Trial, check, scenario, path string, on knownfindings.Subject) {
	c, ok := ft.Result.Checks[check]
	if !ok {
		r := ft.Result
		Expect(on, model.Scenario{Name: scenario, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint})
		return
	}
	if c.Outcome == model.NotApplicable {
		NotApplicable(scenario, c.Hint)
	}
	j := model.Scenario{Name: scenario, Outcome: c.Outcome, Pass: c.Outcome == model.Correct, Hint: c.Hint}
	if !j.Pass {
		b := verdict.FSCheckBreach(c, path)
		b.Scenario = scenario
		j.Breaches = []model.Breach{b}
	}
	Expect(on, j)
}
