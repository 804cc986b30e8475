package specreport

import (
	"maps"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness/phases"
)

// familyCosts is what each scenario family's specs cost in this process: their wall time (an
// Ordered container's BeforeAll is part of its first spec's) and the sandbox starts they made.
// Ginkgo runs one spec at a time, so the counter's change across a spec is that spec's.
var familyCosts = map[string]model.FamilyCost{}

// FamilyCosts is what each family's specs have cost so far, for the trial's frame.
func FamilyCosts() map[string]model.FamilyCost { return maps.Clone(familyCosts) }

var specStart struct {
	sessions int
	in       time.Duration
}

var _ = ginkgo.ReportBeforeEach(func(types.SpecReport) {
	specStart.sessions, specStart.in = phases.Sessions()
})

var _ = ginkgo.ReportAfterEach(func(s types.SpecReport) {
	n, in := phases.Sessions()
	if s.State == types.SpecStateSkipped && n == specStart.sessions {
		return // filtered out by the label filter: it cost nothing
	}
	f := familyOf(s)
	c := familyCosts[f]
	c.MS += s.RunTime.Milliseconds()
	c.Sessions += n - specStart.sessions
	c.SessionMS += (in - specStart.in).Milliseconds()
	familyCosts[f] = c
})

// familyOf is a spec's family: its outermost container's first label (each family's Describe
// carries Label(family)), else "other".
func familyOf(s types.SpecReport) string {
	for _, labels := range s.ContainerHierarchyLabels {
		if len(labels) > 0 {
			return labels[0]
		}
	}
	return "other"
}
