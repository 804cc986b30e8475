// Package specreport is how specs hand their verdicts to the trial: each spec attaches its
// model.Scenario (and the trial's evidence) as a Ginkgo report entry, and FromReports reads them
// back, in process, into the trial's frame.Trial. The runner never sees Ginkgo: it reads the
// frame (wire/frame).
package specreport

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// Report entry names.
const (
	EntryScenario = "sandcheck.scenario"
	EntryEvidence = "sandcheck.evidence"
)

// Attach records a spec's verdict; call it before asserting so a failing spec still reports.
func Attach(v model.Scenario) {
	ginkgo.AddReportEntry(EntryScenario, v, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// AttachEvidence records the trial's evidence once (the runner keeps one per trial).
func AttachEvidence(v any) {
	ginkgo.AddReportEntry(EntryEvidence, v, ginkgo.ReportEntryVisibilityNever)
}

// ReadFile parses a Ginkgo JSON report file (`sandcheck trial --report`).
func ReadFile(path string) (frame.Trial, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return frame.Trial{}, fmt.Errorf("read ginkgo report: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return frame.Trial{}, fmt.Errorf("parse ginkgo report %s: %w", path, err)
	}
	return FromReports(reports), nil
}

// FromReports turns Ginkgo's report into a trial: one verdict per spec that ran. A spec that
// failed without attaching a verdict (the harness itself broke) becomes harness-error, or
// timeout when Ginkgo timed it out.
func FromReports(reports []types.Report) frame.Trial {
	var t frame.Trial
	// Evidence: one object when one spec attached it (a whole Ordered scenario), else an object
	// keyed by the attaching spec's scenario name (scenarios that run a session per spec).
	evidence := map[string]json.RawMessage{}
	var evidenceOrder []string
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				if s.State.Is(types.SpecStateFailureStates) {
					t.Scenarios = append(t.Scenarios, model.Scenario{Name: "setup/" + s.LeafNodeType.String(),
						Outcome: model.HarnessError, Hint: failureText(s)})
				}
				continue
			}
			if (s.State == types.SpecStateSkipped || s.State == types.SpecStatePending) && !hasEntry(s, EntryScenario) {
				continue // filtered out or never reached; a skip after a verdict (known finding) counts
			}
			var sc model.Scenario
			found := false
			var ev json.RawMessage
			for _, e := range s.ReportEntries {
				switch e.Name {
				case EntryScenario:
					if v, ok := scenarioOf(e); ok {
						sc, found = v, true
					}
				case EntryEvidence:
					ev = entryJSON(e)
				}
			}
			if l := s.Labels(); len(l) > 0 {
				sc.Labels = l
			}
			if ev != nil {
				key := sc.Name
				if key == "" {
					key = specName(s)
				}
				evidence[key] = ev
				evidenceOrder = append(evidenceOrder, key)
			}
			if !found {
				sc = model.Scenario{Name: specName(s), Labels: sc.Labels, Outcome: model.HarnessError, Hint: failureText(s)}
				if s.State == types.SpecStateTimedout || s.State == types.SpecStateInterrupted {
					sc.Outcome = model.Timeout
				}
			}
			t.Scenarios = append(t.Scenarios, sc)
		}
	}
	switch len(evidenceOrder) {
	case 0:
	case 1:
		t.Evidence = evidence[evidenceOrder[0]]
	default:
		t.Evidence, _ = json.Marshal(evidence)
	}
	t.Outcome, t.Hint = model.TrialOutcome(t.Scenarios)
	return t
}

// scenarioOf is a verdict entry's value: the model.Scenario itself for a report taken in process
// (ReportAfterSuite), else read from the JSON Ginkgo wrote.
func scenarioOf(e types.ReportEntry) (model.Scenario, bool) {
	if v, ok := e.Value.GetRawValue().(model.Scenario); ok {
		return v, true
	}
	var v model.Scenario
	if err := json.Unmarshal(entryJSON(e), &v); err != nil {
		return model.Scenario{}, false
	}
	return v, true
}

// entryJSON is a report entry's value as JSON: as Ginkgo's JSON report carries it, or, for a
// report taken in process, encoded from the value itself.
func entryJSON(e types.ReportEntry) json.RawMessage {
	if e.Value.AsJSON != "" {
		return json.RawMessage(e.Value.AsJSON)
	}
	b, err := json.Marshal(e.Value.GetRawValue())
	if err != nil {
		return nil
	}
	return b
}

func specName(s types.SpecReport) string {
	return strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " / ")
}

func failureText(s types.SpecReport) string {
	if s.Failure.Message == "" {
		return s.State.String()
	}
	msg := s.Failure.Message
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

func hasEntry(s types.SpecReport, name string) bool {
	for _, e := range s.ReportEntries {
		if e.Name == name {
			return true
		}
	}
	return false
}
