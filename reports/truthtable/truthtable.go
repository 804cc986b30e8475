// Package truthtable shows the network and bypass families as truth tables, in the manner of
// Kubernetes' NetworkPolicy conformance tool cyclonus: a row per case (a fixture host over a
// channel, a bypass case), what the policy expects of it, and per trial group (a cell of the
// matrix) what the trials observed, the cells that differ marked wrong and one count line per
// table. Three renderings share the model: the terminal (WriteTerminal), report.md (Markdown)
// and report.html (HTML).
//
// It reads the report only, and decides nothing the verdicts did not: a cell is wrong exactly
// where a trial's verdict failed in a way that concerns the cell's host (the breach's check,
// schema.Counts.Checks, says which), right where the verdict passed or failed about the other
// host only. A failure it cannot place marks every host of the row wrong: a table may overstate
// a failure, never hide one.
package truthtable

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Family is the scenario family a table shows.
type Family string

const (
	Network Family = "network"
	Bypass  Family = "bypass"
)

// Scenario prefixes of the rows each family reads.
const (
	channelPrefix = "network/channel/"
	bypassPrefix  = "bypass/"
)

// Hosts of the network rows.
const (
	hostAllowed = model.RoleAllowed
	hostDenied  = model.RoleDenied
)

// Expectations.
const (
	Reached = "reached"
	Refused = "refused"
	Unknown = "?" // the cell's network policy is not in the report
)

// Mark is how a cell compares with the expectation.
type Mark int

const (
	NotRun        Mark = iota // the row's scenario did not run in this trial group
	Right                     // every trial that told anything agreed with the expectation
	Wrong                     // some trial did not
	NotApplicable             // the scenario was not applicable in every trial
	Unjudged                  // no trial told anything of this case (harness trouble, timeouts)
)

// Table is one family's truth table over trial groups that share a policy.
type Table struct {
	Family  Family
	Title   string
	Columns []schema.CellRef
	Rows    []Row
}

// Row is one case.
type Row struct {
	Case     string // "allowed http", "matching/wildcard-apex"
	Scenario string // the report row it reads
	Expected string // Reached, Refused or Unknown
	Cells    []Cell // one per column
}

// Cell is one case in one trial group.
type Cell struct {
	Mark   Mark
	Trials int
	Right  int           // trials that agreed with the expectation
	Wrong  []Observation // trials that did not, by what they showed
	NA     int           // trials in which the scenario was not applicable
	Untold int           // trials that told nothing of this case
	// Known: every failure of the row in this trial group is covered by known findings. Still
	// wrong: the mark only says it is on the list.
	Known bool
}

// Observation is what some trials showed where the policy expected otherwise.
type Observation struct {
	What   string // REACHED, REFUSED, DEAD, ...
	Trials int
}

// Words of the observations (what a wrong cell shows, in capitals so a wrong cell reads apart).
const (
	obsReached        = "REACHED" // non-enforcing: the host, or the case's target, was reached
	obsRefused        = "REFUSED" // allowed-blocked: the allowed host refused
	obsAllowedRefused = "ALLOWED-REFUSED"
	obsDead           = "DEAD"   // proxy-dead
	obsFailed         = "FAILED" // sandbox-failed: the sandbox refused to start
)

// Legend says what the cells say, for every rendering.
const Legend = "ok N/T: N of the T trials did as the policy expects; REACHED: the host (for a bypass case, what it aims at) " +
	"was reached; REFUSED: the allowed host was refused; ALLOWED-REFUSED: a bypass case's control, the allowed host over " +
	"the same way, was refused, so its refusal proves nothing; DEAD: the proxy was dead; FAILED: the sandbox did not start; " +
	"untold: no trial's verdict told this case (harness trouble, a timeout, or a verdict about the other host); " +
	"n/a: not applicable; -: not run; (known): every failure of the row there is a known finding, still wrong."

// Text is the cell as the Markdown and HTML renderings show it ("ok 20/20", "REACHED 3/20",
// "n/a"); the terminal prefixes a wrong cell with its mark.
func (c Cell) Text() string {
	switch c.Mark {
	case NotRun:
		return "-"
	case NotApplicable:
		return "n/a"
	case Unjudged:
		return fmt.Sprintf("untold %d/%d", c.Untold, c.Trials)
	case Right:
		return fmt.Sprintf("ok %d/%d", c.Right, c.Trials)
	}
	parts := make([]string, len(c.Wrong))
	for i, o := range c.Wrong {
		parts[i] = fmt.Sprintf("%s %d/%d", o.What, o.Trials, c.Trials)
	}
	s := strings.Join(parts, ", ")
	if c.Known {
		s += " (known)"
	}
	return s
}

// Count is a table's cells by mark.
type Count struct{ Wrong, NotApplicable, Right, Unjudged, NotRun int }

// Count counts the table's cells.
func (t Table) Count() Count {
	var n Count
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			switch c.Mark {
			case Wrong:
				n.Wrong++
			case NotApplicable:
				n.NotApplicable++
			case Right:
				n.Right++
			case Unjudged:
				n.Unjudged++
			default:
				n.NotRun++
			}
		}
	}
	return n
}

// String is the count line: "3 wrong, 12 not applicable, 140 right", then the unjudged and the
// not run when there are any.
func (n Count) String() string {
	s := fmt.Sprintf("%d wrong, %d not applicable, %d right", n.Wrong, n.NotApplicable, n.Right)
	if n.Unjudged > 0 {
		s += fmt.Sprintf(", %d unjudged", n.Unjudged)
	}
	if n.NotRun > 0 {
		s += fmt.Sprintf(", %d not run", n.NotRun)
	}
	return s
}

// AllRight says whether every cell of a row that ran is right.
func (r Row) AllRight() bool {
	ran := false
	for _, c := range r.Cells {
		switch c.Mark {
		case Right:
			ran = true
		case NotRun:
		default:
			return false
		}
	}
	return ran
}

// Build makes the tables of a report: the network family's, one per network policy among the
// trial groups that ran its channels, then the bypass family's. cells chooses the trial groups
// and their order (a run's cells); nil takes every cell of the report in its order.
func Build(rep *schema.Report, cells []model.Cell) []Table {
	groups := columns(rep, cells)
	rows := map[string]map[string]schema.Cell{} // cell ID -> scenario -> row
	for _, c := range rep.Cells {
		if c.Aggregate {
			continue
		}
		if rows[c.CellID] == nil {
			rows[c.CellID] = map[string]schema.Cell{}
		}
		rows[c.CellID][c.Scenario] = c
	}
	tables := networkTables(groups, rows)
	if t, ok := bypassTable(groups, rows); ok {
		tables = append(tables, t)
	}
	return tables
}

// columns are the report's cells (overall rows), chosen and ordered by cells when given.
func columns(rep *schema.Report, cells []model.Cell) []schema.Overall {
	if cells == nil {
		return rep.Overall
	}
	byID := map[string]schema.Overall{}
	for _, o := range rep.Overall {
		byID[o.CellID] = o
	}
	var out []schema.Overall
	for _, c := range cells {
		if o, ok := byID[c.ID]; ok {
			out = append(out, o)
		}
	}
	return out
}

// scenarios lists the scenarios under prefix that any of the groups ran.
func scenarios(groups []schema.Overall, rows map[string]map[string]schema.Cell, prefix string) []string {
	seen := map[string]bool{}
	for _, g := range groups {
		for s := range rows[g.CellID] {
			if strings.HasPrefix(s, prefix) {
				seen[s] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// policyKey names a trial group's network policy, for grouping columns.
func policyKey(p *schema.NetworkPolicy) string {
	if p == nil {
		return "?"
	}
	return strings.Join(p.Reach, ",")
}

// networkTables makes one network table per policy, in the order the policies first appear.
func networkTables(groups []schema.Overall, rows map[string]map[string]schema.Cell) []Table {
	var keys []string
	byKey := map[string][]schema.Overall{}
	for _, g := range groups {
		ran := false
		for s := range rows[g.CellID] {
			ran = ran || strings.HasPrefix(s, channelPrefix)
		}
		if !ran {
			continue
		}
		k := policyKey(g.Network)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], g)
	}
	var out []Table
	for _, k := range keys {
		cols := byKey[k]
		policy := cols[0].Network
		t := Table{Family: Network, Title: networkTitle(cols, policy)}
		for _, c := range cols {
			t.Columns = append(t.Columns, c.CellRef)
		}
		for _, host := range []string{hostAllowed, hostDenied} {
			for _, ch := range channels(scenarios(cols, rows, channelPrefix)) {
				r := Row{Case: host + " " + ch, Scenario: channelPrefix + ch, Expected: expected(policy, host, ch)}
				for _, c := range cols {
					row, ok := rows[c.CellID][r.Scenario]
					r.Cells = append(r.Cells, networkCell(row, ok, host, ch))
				}
				t.Rows = append(t.Rows, r)
			}
		}
		out = append(out, t)
	}
	return out
}

// channels orders the channels of the channel scenarios as the probe tries them, then any other.
func channels(scens []string) []string {
	have := map[string]bool{}
	for _, s := range scens {
		have[strings.TrimPrefix(s, channelPrefix)] = true
	}
	var out []string
	for _, ch := range model.AllChannels {
		if have[ch] {
			out = append(out, ch)
			delete(have, ch)
		}
	}
	rest := make([]string, 0, len(have))
	for ch := range have {
		rest = append(rest, ch)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// networkTitle says whose policy the table holds and what it expects.
func networkTitle(cols []schema.Overall, p *schema.NetworkPolicy) string {
	var targets []string
	for _, c := range cols {
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
	}
	who := strings.Join(targets, ", ")
	switch {
	case p == nil:
		return fmt.Sprintf("network, %s (policy not in the report): the denied host refused everywhere; the allowed host as the trials' own policy expects", who)
	case len(p.Reach) == 0:
		return fmt.Sprintf("network, %s (deny-all): both hosts refused everywhere", who)
	}
	return fmt.Sprintf("network, %s: the allowed host reached over %s only; the denied host refused everywhere", who, strings.Join(p.Reach, ", "))
}

// expected is what the policy expects of a host over a channel.
func expected(p *schema.NetworkPolicy, host, ch string) string {
	switch {
	case host == hostDenied:
		return Refused
	case p == nil:
		return Unknown
	case slices.Contains(p.Reach, ch):
		return Reached
	}
	return Refused
}

// tally is a cell under construction.
type tally struct {
	Cell
	wrong map[string]int
}

func (t *tally) wrongAs(what string, n int) {
	if n <= 0 {
		return
	}
	if t.wrong == nil {
		t.wrong = map[string]int{}
	}
	t.wrong[what] += n
}

// obsOrder is the order of a wrong cell's observations: the fail-open first.
var obsOrder = []string{obsReached, obsRefused, obsAllowedRefused, obsDead, obsFailed}

// base counts what every family's cell shares: the trials, the not applicable, those that told
// nothing (harness trouble, timeouts, outcomes this build does not know), and the passes.
func base(row schema.Cell) tally {
	var t tally
	t.Trials = row.Trials
	t.NA = row.Outcomes[string(model.NotApplicable)]
	t.Untold = max(0, row.Trials-row.Measured-t.NA)
	t.Right = max(0, row.Measured-row.Failures)
	t.Known = row.Failures > 0 && row.KnownFailures() == row.Failures
	return t
}

// done marks the cell and puts its observations in order.
func (t tally) done() Cell {
	c := t.Cell
	var whats []string
	for w := range t.wrong {
		whats = append(whats, w)
	}
	sort.Slice(whats, func(i, j int) bool {
		a, b := slices.Index(obsOrder, whats[i]), slices.Index(obsOrder, whats[j])
		if a < 0 {
			a = len(obsOrder)
		}
		if b < 0 {
			b = len(obsOrder)
		}
		if a != b {
			return a < b
		}
		return whats[i] < whats[j]
	})
	for _, w := range whats {
		c.Wrong = append(c.Wrong, Observation{What: w, Trials: t.wrong[w]})
	}
	switch {
	case c.Trials == 0:
		c.Mark = NotRun
	case len(c.Wrong) > 0:
		c.Mark = Wrong
	case c.Right > 0:
		c.Mark = Right
	case c.NA == c.Trials:
		c.Mark = NotApplicable
	default:
		c.Mark = Unjudged
	}
	if c.Mark != Wrong {
		c.Known = false
	}
	return c
}

// upper is an outcome no family names, as an observation.
func upper(o string) string { return strings.ToUpper(o) }

// networkCell is one host over one channel in one trial group, from the channel's row: its
// passing trials are right for both hosts; a failing trial is wrong for the host its breach is
// about (CHANNEL:denied or CHANNEL:allowed for a non-enforcing channel; the allowed host for a
// refusal, a dead proxy or a sandbox that did not start, which reached neither) and tells the
// other host's cell what it can: a denied host reached says nothing of the allowed one.
func networkCell(row schema.Cell, ran bool, host, ch string) Cell {
	if !ran {
		return Cell{Mark: NotRun}
	}
	t := base(row)
	for _, o := range sortedKeys(row.FailingOutcomes) {
		n := row.FailingOutcomes[o]
		switch model.Outcome(o) {
		case model.NonEnforcing:
			denied := min(n, row.CheckTrials(ch+":"+hostDenied, model.NonEnforcing))
			allowed := min(n-denied, row.CheckTrials(ch+":"+hostAllowed, model.NonEnforcing))
			unplaced := n - denied - allowed // no breach says which host: both, as a fail-open
			if host == hostDenied {
				t.wrongAs(obsReached, denied+unplaced)
				t.Right += allowed
			} else {
				t.wrongAs(obsReached, allowed+unplaced)
				t.Untold += denied
			}
		case model.AllowedBlocked, model.ProxyDead, model.SandboxFailed:
			if host == hostDenied {
				t.Right += n // the denied host was not reached: the fixture servers logged nothing
				continue
			}
			t.wrongAs(map[model.Outcome]string{model.AllowedBlocked: obsRefused, model.ProxyDead: obsDead, model.SandboxFailed: obsFailed}[model.Outcome(o)], n)
		default:
			t.wrongAs(upper(o), n)
		}
	}
	return t.done()
}

// bypassTable is the bypass family's table: every case is expected refused.
func bypassTable(groups []schema.Overall, rows map[string]map[string]schema.Cell) (Table, bool) {
	var cols []schema.Overall
	for _, g := range groups {
		for s := range rows[g.CellID] {
			if strings.HasPrefix(s, bypassPrefix) {
				cols = append(cols, g)
				break
			}
		}
	}
	if len(cols) == 0 {
		return Table{}, false
	}
	t := Table{Family: Bypass, Title: "bypass: every case refused (its control, the allowed host over the same way, reached)"}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.CellRef)
	}
	for _, s := range scenarios(cols, rows, bypassPrefix) {
		r := Row{Case: strings.TrimPrefix(s, bypassPrefix), Scenario: s, Expected: Refused}
		for _, c := range cols {
			row, ok := rows[c.CellID][s]
			r.Cells = append(r.Cells, bypassCell(row, ok))
		}
		t.Rows = append(t.Rows, r)
	}
	return t, true
}

// bypassCell is one case in one trial group: its passing trials are right (a case that passes on
// the sandbox refusing to start, loudly, included), and each failing trial wrong by its outcome.
func bypassCell(row schema.Cell, ran bool) Cell {
	if !ran {
		return Cell{Mark: NotRun}
	}
	t := base(row)
	names := map[model.Outcome]string{model.NonEnforcing: obsReached, model.AllowedBlocked: obsAllowedRefused,
		model.ProxyDead: obsDead, model.SandboxFailed: obsFailed}
	for _, o := range sortedKeys(row.FailingOutcomes) {
		what, ok := names[model.Outcome(o)]
		if !ok {
			what = upper(o)
		}
		t.wrongAs(what, row.FailingOutcomes[o])
	}
	return t.done()
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, n := range m {
		if n > 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
