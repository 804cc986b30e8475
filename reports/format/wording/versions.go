package wording

import (
	"fmt"
	"math"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/versiontable"
)

// The cells of a version x scenario table (reports/versiontable) as both pages show them.

// Marks on a cell that changed against the previous version it ran in.
const (
	MarkWorse   = "▲"
	MarkBetter  = "▼"
	MarkOutcome = "◆"
)

func ChangeMark(c *versiontable.Change) string {
	if c == nil {
		return ""
	}
	switch c.Kind {
	case versiontable.KindWorse:
		return MarkWorse
	case versiontable.KindBetter:
		return MarkBetter
	}
	return MarkOutcome
}

// SeriesName is "srt on local" plus the fault and labels when set.
func SeriesName(r schema.CellRef) string {
	s := r.Target + " on " + r.Host
	if r.Fault != "" {
		s += ", fault " + r.Fault
	}
	if r.Labels != "" {
		s += " [" + r.Labels + "]"
	}
	return s
}

// Pct0 is a whole percentage: the version table's cells are narrow.
func Pct0(r float64) string { return fmt.Sprintf("%.0f%%", math.Round(100*r)) }

// VersionCellText is one cell: the failure rate and its Wilson interval, then the failing outcome.
func VersionCellText(c versiontable.Cell) string {
	switch {
	case c.Band == "not-applicable":
		return "n/a (not driven)"
	case c.Band != "":
		return c.Band + " (band)"
	case !c.Has:
		return "—"
	case c.Measured == 0:
		return "n/a"
	}
	s := fmt.Sprintf("%s [%s–%s]", Pct0(c.Rate), strings.TrimSuffix(Pct0(c.CI[0]), "%"), Pct0(c.CI[1]))
	if c.Failures > 0 {
		s += " " + c.Failing
		if c.FailOpen {
			s += " OPEN"
		}
		if c.Known {
			s += " (known)"
		}
	}
	return s
}
