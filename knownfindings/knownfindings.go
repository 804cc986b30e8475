// Package knownfindings is the documented list of places where a real, healthy sandbox fails a
// sandcheck spec. Tests pin it so that a change in the sandbox's behaviour is noticed.
package knownfindings

import (
	"bytes"
	_ "embed"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/suites/classify"
)

//go:embed srt.yaml
var srtYAML []byte

// Finding is one scenario a healthy sandbox fails, with the outcome it shows.
type Finding struct {
	Scenario string           `yaml:"scenario"`
	Outcome  classify.Outcome `yaml:"outcome"`
	// Also lists further outcomes an intermittent finding shows (a race has more than one face).
	Also []classify.Outcome `yaml:"also"`
	// Intermittent findings show in some trials only; the others pass.
	Intermittent bool   `yaml:"intermittent"`
	Note         string `yaml:"note"`
}

// Matches reports whether o is an outcome this finding shows.
func (f Finding) Matches(o classify.Outcome) bool {
	if o == f.Outcome {
		return true
	}
	for _, a := range f.Also {
		if o == a {
			return true
		}
	}
	return false
}

// List is the known findings of one target version.
type List struct {
	Target   string    `yaml:"target"`
	Version  string    `yaml:"version"`
	Findings []Finding `yaml:"findings"`
}

// SRT returns the known findings of the pinned srt.
func SRT() (List, error) {
	var l List
	dec := yaml.NewDecoder(bytes.NewReader(srtYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&l); err != nil {
		return l, fmt.Errorf("knownfindings/srt.yaml: %w", err)
	}
	for i, f := range l.Findings {
		if !f.Outcome.Valid() || f.Scenario == "" {
			return l, fmt.Errorf("knownfindings/srt.yaml: finding %d: scenario %q outcome %q", i, f.Scenario, f.Outcome)
		}
		for _, a := range f.Also {
			if !a.Valid() {
				return l, fmt.Errorf("knownfindings/srt.yaml: finding %d (%s): unknown outcome %q in also", i, f.Scenario, a)
			}
		}
	}
	return l, nil
}

// Lookup returns the finding for a scenario, if any.
func (l List) Lookup(scenario string) (Finding, bool) {
	for _, f := range l.Findings {
		if f.Scenario == scenario {
			return f, true
		}
	}
	return Finding{}, false
}
