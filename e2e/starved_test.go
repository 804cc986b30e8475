package e2e

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// srtStarved matches the messages with which srt 0.0.83 refuses to start when its own start-up
// deadlines pass on a CPU-starved machine: `which` runs with a 1 s timeout (a tool it needs is
// then "not installed", the shell "not found in PATH"), and its bridge sockets get five attempts
// within a second. Measured on this machine under load (README, "WSL2-like"), never on a quiet
// run. Such a trial is the sandbox failing closed, loudly, and sandcheck classifies it so; it is
// not a detector error, but it is not the healthy run a detector test asks for either.
var srtStarved = regexp.MustCompile(`Shell '\w+' not found in PATH|Sandbox dependencies not available: .*not installed|Failed to create bridge sockets after \d+ attempts`)

// startRace is a start-up race a sandbox is known for, by the verdict it leaves: an outcome and a
// hint. In `make test` it may take one trial of a row (a scenario of a cell, or a cell's trials),
// logged, so a loaded CI machine does not fail the suite on the sandbox's own race. The excused
// trial is named, by run, cell and trial index from the journal, and its own record must show
// exactly the race's verdict; the rest of the row is judged without it. The long tier
// (SANDCHECK_LONG=1) excuses nothing.
type startRace struct {
	what    string // for the log
	outcome model.Outcome
	hint    *regexp.Regexp
}

var (
	srtStarvedRace  = startRace{"srt refused to start on a starved machine", model.SandboxFailed, srtStarved}
	claudeStartRace = startRace{"the bundled runtime's start-up race", model.ProxyDead, claudeRace}
)

// trialRef names one trial as the journal does.
type trialRef struct {
	Run   string
	Cell  string // the cell's ID
	Trial int    // 0-based index within the cell
}

func (r trialRef) String() string {
	return fmt.Sprintf("trial %d of cell %s in run %s", r.Trial, r.Cell, r.Run)
}

// verdict is one trial's verdict in one row, from its journal record.
type verdict struct {
	trialRef
	Outcome model.Outcome
	Pass    bool
	Hint    string
	Known   string // the known findings covering the failure
	// Trouble is what else the trial's record shows that a race does not explain: fail-open
	// evidence no scenario verdict of the trial accounts for (as the report counts it at trial
	// level), a timeout, harness trouble. A trial with any is never excused.
	Trouble string
}

// journalRows holds a run's verdicts by row: a report row's Key() (cell ID and scenario) for a
// scenario's verdicts, rowOfTrials(cell ID) for the trials' own. One verdict per trial, in
// journal order.
type journalRows map[string][]verdict

// rowOfTrials is the key of a cell's trial-level verdicts.
func rowOfTrials(cell string) string { return cell + "\x00" }

func (rows journalRows) add(r model.Record) {
	var trouble []string
	// Fail-open evidence no known finding accounts for, by the rule every tool judges with
	// (model.Record.FailOpen): egress a known breach lists is that breach's (a claude-settings
	// trial runs sixty scenarios, some of them known to leak); any other is the trial's.
	if !r.FailOpen().MetBy(model.Accept{Every: true}) {
		trouble = append(trouble, fmt.Sprintf("fail-open outside the known findings: outcome %s, egress no known breach lists %q", r.Outcome, r.UnownedEgress()))
	}
	if r.TimedOut {
		trouble = append(trouble, "timed out")
	}
	if r.Error != "" {
		trouble = append(trouble, "error: "+r.Error)
	}
	ref := trialRef{Run: r.RunID, Cell: r.Cell.ID, Trial: r.Trial}
	v := verdict{trialRef: ref, Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Hint: r.Hint, Trouble: strings.Join(trouble, "; ")}
	rows[rowOfTrials(r.Cell.ID)] = append(rows[rowOfTrials(r.Cell.ID)], v)
	for _, sc := range r.Scenarios {
		v.Outcome, v.Pass, v.Hint, v.Known = sc.Outcome, sc.Pass, cmp.Or(sc.Hint, r.Hint), strings.Join(sc.KnownIDs(), ", ")
		key := r.Cell.ID + "\x00" + sc.Name
		rows[key] = append(rows[key], v)
	}
}

// readJournalRows reads the run's journal in out into rows.
func readJournalRows(t testing.TB, out string) journalRows {
	t.Helper()
	rows := journalRows{}
	if _, err := journal.Scan(out+"/journal.jsonl", func(r model.Record) error { rows.add(r); return nil }); err != nil {
		t.Fatal(err)
	}
	return rows
}

// shows says whether a trial's own verdict is exactly the race's: its outcome, its hint, a
// failure no known finding covers, and nothing else in the record.
func (r startRace) shows(v verdict) bool {
	return v.Outcome == r.outcome && !v.Pass && v.Known == "" && v.Trouble == "" && r.hint.MatchString(v.Hint)
}

// excuse names the trial of a row (its verdicts) the race may take: the first that shows it.
// Another that shows it is not excused. None in the long tier.
func (r startRace) excuse(t testing.TB, where string, vs []verdict) (trialRef, bool) {
	t.Helper()
	var showing []verdict
	for _, v := range vs {
		if r.shows(v) {
			showing = append(showing, v)
		}
	}
	if len(showing) == 0 || isLong() {
		return trialRef{}, false
	}
	ex := showing[0]
	t.Logf("%s: excused %s, %s: %s", where, ex.trialRef, r.what, ex.Hint)
	if len(showing) > 1 {
		t.Logf("%s: %d trials show %s; only one is excused", where, len(showing), r.what)
	}
	return ex.trialRef, true
}

// unknownFailures is a report row's failures outside the known findings with the trial the race
// took (if any) set aside: that trial is one failure no finding covers (shows), so exactly one
// comes off, and every other trial's failure counts.
func (r startRace) unknownFailures(t testing.TB, c schema.Cell, rows journalRows) (int, trialRef, bool) {
	t.Helper()
	unknown := c.Failures - c.KnownFailures()
	ex, ok := r.excuse(t, c.Name(), rows[c.Key()])
	if ok {
		unknown--
	}
	return unknown, ex, ok
}

func isLong() bool { return os.Getenv("SANDCHECK_LONG") == "1" }

// unexplained describes, for a failure message, each trial of a report row that failed outside
// the known findings, with what its record shows beyond the verdict.
func (rows journalRows) unexplained(c schema.Cell) string {
	var b strings.Builder
	for _, v := range rows[c.Key()] {
		if !v.Pass && v.Known == "" {
			fmt.Fprintf(&b, "\n    %s: %s %s", v.trialRef, v.Outcome, v.Hint)
			if v.Trouble != "" {
				fmt.Fprintf(&b, " [%s]", v.Trouble)
			}
		}
	}
	return b.String()
}
