// Package specreport is the contract between specs and the runner: specs attach their verdict
// and evidence as Ginkgo report entries; the runner reads them back from Ginkgo's JSON report.
package specreport

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/model"
)

// Report entry names.
const (
	EntryScenario = "sandcheck.scenario"
	EntryEvidence = "sandcheck.evidence"
)

// Verdict is what one spec attaches.
type Verdict struct {
	Name    string        `json:"name"`
	Outcome model.Outcome `json:"outcome"`
	Pass    bool          `json:"pass"`
	Hint    string        `json:"hint,omitempty"`
	// Breaches, Known and Unreproduced are model.Scenario's (knownfindings decides them).
	Breaches     []string `json:"breaches,omitempty"`
	Known        string   `json:"known,omitempty"`
	Unreproduced string   `json:"unreproduced,omitempty"`
}

// Attach records a spec's verdict; call it before asserting so a failing spec still reports.
func Attach(v Verdict) {
	ginkgo.AddReportEntry(EntryScenario, v, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// AttachEvidence records the trial's evidence once (the runner keeps one per trial).
func AttachEvidence(v any) {
	ginkgo.AddReportEntry(EntryEvidence, v, ginkgo.ReportEntryVisibilityNever)
}

// Trial is what a Ginkgo JSON report says about one trial.
type Trial struct {
	Outcome   model.Outcome    `json:"outcome"`
	Hint      string           `json:"hint,omitempty"`
	Scenarios []model.Scenario `json:"scenarios"`
	Evidence  json.RawMessage  `json:"evidence,omitempty"`
	// PhasesMS is where the trial process's time went, per phase (suites/harness/phases), in ms.
	PhasesMS map[string]int64 `json:"phases_ms,omitempty"`
}

// ReadFile parses a Ginkgo JSON report file.
func ReadFile(path string) (Trial, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Trial{}, fmt.Errorf("read ginkgo report: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return Trial{}, fmt.Errorf("parse ginkgo report %s: %w", path, err)
	}
	return FromReports(reports), nil
}

// FromReports turns Ginkgo's report into a trial: one scenario per spec that ran. A spec that
// failed without attaching a verdict (the harness itself broke) becomes harness-error, or
// timeout when Ginkgo timed it out.
func FromReports(reports []types.Report) Trial {
	var t Trial
	var failing []model.Outcome
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
					failing = append(failing, model.HarnessError)
				}
				continue
			}
			if (s.State == types.SpecStateSkipped || s.State == types.SpecStatePending) && !hasEntry(s, EntryScenario) {
				continue // filtered out or never reached; a skip after a verdict (known finding) counts
			}
			sc := model.Scenario{Labels: s.Labels()}
			found := false
			var ev json.RawMessage
			for _, e := range s.ReportEntries {
				switch e.Name {
				case EntryScenario:
					var v Verdict
					if json.Unmarshal(entryJSON(e), &v) == nil {
						sc.Name, sc.Outcome, sc.Pass, sc.Hint = v.Name, v.Outcome, v.Pass, v.Hint
						sc.Breaches, sc.Known, sc.Unreproduced = v.Breaches, v.Known, v.Unreproduced
						found = true
					}
				case EntryEvidence:
					ev = entryJSON(e)
				}
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
				sc.Name = specName(s)
				sc.Outcome = model.HarnessError
				if s.State == types.SpecStateTimedout || s.State == types.SpecStateInterrupted {
					sc.Outcome = model.Timeout
				}
				sc.Hint = failureText(s)
			}
			t.Scenarios = append(t.Scenarios, sc)
			if !sc.Pass {
				failing = append(failing, sc.Outcome)
			}
		}
	}
	switch len(evidenceOrder) {
	case 0:
	case 1:
		t.Evidence = evidence[evidenceOrder[0]]
	default:
		t.Evidence, _ = json.Marshal(evidence)
	}
	switch {
	case len(t.Scenarios) == 0:
		t.Outcome, t.Hint = model.HarnessError, "no spec ran (label filter matched nothing?)"
	case len(failing) == 0:
		t.Outcome = model.Correct
	default:
		t.Outcome = model.Worst(failing...)
		// Lead with a failure no known finding covers, if one shows the outcome.
		for _, known := range []bool{false, true} {
			for _, sc := range t.Scenarios {
				if !sc.Pass && sc.Outcome == t.Outcome && sc.Hint != "" && (sc.Known != "") == known {
					t.Hint = sc.Hint
					break
				}
			}
			if t.Hint != "" {
				break
			}
		}
	}
	return t
}

// entryJSON is a report entry's value as JSON: as Ginkgo's JSON report carries it, or, for a
// report taken in process (ReportAfterSuite), encoded from the value itself.
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
