// Package journal is the on-disk truth of a run: one JSON line per finished trial, appended and
// fsynced before the next trial counts, so nothing finished is ever lost and a run can resume.
package journal

// SchemaVersion is bumped whenever a field changes meaning; readers refuse newer majors.
//
// v1: every record carries its evidence. v2 adds compact records (Compact): a trial that
// passed, or failed only by pinned known findings, keeps its verdicts and durations but not its
// evidence (see compact.go). v3 types the breaches of a verdict (model.Breach: scenario, check,
// outcome, words, the known finding covering each, the egress lines each accounts for) where
// v2 had their words and the verdict one list of covering ids. Readers take every version; an
// older verdict is upgraded as it is read (model.Scenario.UnmarshalJSON).
const SchemaVersion = 3
