package truthtable

import (
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// The crafted reports are made as real ones are: journal records, as the network and bypass
// families write their verdicts, folded by the aggregator.

var srtReach = []string{model.ChanHTTP, model.ChanHTTPS, model.ChanSOCKS}

// channel is one channel's verdict in one trial: its outcome and, when it fails, the role its
// breach is about (suites/verdict.ChannelBreach: CHANNEL:ROLE).
type channel struct {
	o    model.Outcome
	role string
}

var ok = channel{o: model.Correct}

// networkTrial is one trial's channel verdicts, by channel; channels not given are correct.
func networkTrial(cell model.Cell, trial int, by map[string]channel) model.Record {
	r := model.Record{RunID: "run1", Cell: cell, Trial: trial, Outcome: model.Correct}
	for _, ch := range model.AllChannels {
		c, given := by[ch]
		if !given {
			c = ok
		}
		s := model.Scenario{Name: "network/channel/" + ch, Outcome: c.o, Pass: c.o == model.Correct || c.o == model.NotApplicable}
		if !s.Pass {
			check := ch
			if c.role != "" {
				check += ":" + c.role
			}
			s.Breaches = []model.Breach{{Scenario: s.Name, Check: check, Outcome: c.o, What: ch + ": " + c.role}}
			r.Outcome = model.Worst(r.Outcome, c.o)
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	// The family's aggregates are not cases.
	r.Scenarios = append(r.Scenarios, model.Scenario{Name: "network/seed", Outcome: r.Outcome, Pass: r.Outcome == model.Correct, Aggregate: true})
	return r
}

// bypassTrial is one trial's case verdicts, by case (bypass/CLASS/CASE): the outcome and, when it
// fails, the breach's check (VIA:ROLE).
func bypassTrial(cell model.Cell, trial int, cases map[string]channel) model.Record {
	r := model.Record{RunID: "run1", Cell: cell, Trial: trial, Outcome: model.Correct}
	for name, c := range cases {
		s := model.Scenario{Name: name, Outcome: c.o, Pass: c.o == model.Correct || c.o == model.NotApplicable}
		if !s.Pass {
			s.Breaches = []model.Breach{{Scenario: name, Check: c.role, Outcome: c.o, What: name}}
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	return r
}

type cellRun struct {
	cell   model.Cell
	reach  []string // nil with noPolicy: the report does not know the cell's policy
	policy bool
	trials []model.Record
}

func report(t *testing.T, runs ...cellRun) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		for _, rec := range r.trials {
			a.Add(rec)
		}
	}
	rep := a.Report()
	for i, o := range rep.Overall {
		for _, r := range runs {
			if r.cell.ID == o.CellID && r.policy {
				rep.Overall[i].Network = &schema.NetworkPolicy{Reach: append([]string{}, r.reach...)}
			}
		}
	}
	return rep
}

func repeat(n int, f func(trial int) model.Record) []model.Record {
	out := make([]model.Record, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

var (
	srtCell       = model.Cell{ID: "srt-healthy", Target: "srt", Host: "local", User: "unprivileged"}
	openProxyCell = model.Cell{ID: "srt-open-proxy", Target: "srt", Host: "local", User: "unprivileged", Fault: "open-proxy"}
	bwrapCell     = model.Cell{ID: "bwrap", Target: "bwrap", Host: "local", User: "unprivileged"}
)

func healthySRT(n int) cellRun {
	return cellRun{cell: srtCell, reach: srtReach, policy: true, trials: repeat(n, func(i int) model.Record { return networkTrial(srtCell, i, nil) })}
}

// openProxy is srt whose proxy lets everything through: the denied host reached over the three
// proxy channels in every trial; the ways around the proxy still closed.
func openProxy(n int) cellRun {
	reached := channel{model.NonEnforcing, "denied"}
	return cellRun{cell: openProxyCell, reach: srtReach, policy: true, trials: repeat(n, func(i int) model.Record {
		return networkTrial(openProxyCell, i, map[string]channel{model.ChanHTTP: reached, model.ChanHTTPS: reached, model.ChanSOCKS: reached})
	})}
}

// denyAll is bwrap: no proxy, so the proxy channels are not applicable; direct and dns blocked.
func denyAll(n int) cellRun {
	na := channel{o: model.NotApplicable}
	return cellRun{cell: bwrapCell, reach: nil, policy: true, trials: repeat(n, func(i int) model.Record {
		return networkTrial(bwrapCell, i, map[string]channel{model.ChanHTTP: na, model.ChanHTTPS: na, model.ChanSOCKS: na})
	})}
}

// cellOf finds a row's cell in the column of cellID.
func cellOf(t *testing.T, tab Table, rowCase, cellID string) Cell {
	t.Helper()
	col := -1
	for i, c := range tab.Columns {
		if c.CellID == cellID {
			col = i
		}
	}
	for _, r := range tab.Rows {
		if r.Case == rowCase && col >= 0 {
			return r.Cells[col]
		}
	}
	t.Fatalf("%s: no row %q in column %s", tab.Title, rowCase, cellID)
	return Cell{}
}

func rowOf(t *testing.T, tab Table, rowCase string) Row {
	t.Helper()
	for _, r := range tab.Rows {
		if r.Case == rowCase {
			return r
		}
	}
	t.Fatalf("%s: no row %q", tab.Title, rowCase)
	return Row{}
}

// want is one cell's expected mark and text.
type want struct {
	row, cell string
	expected  string
	mark      Mark
	text      string
}

func TestTables(t *testing.T) {
	cases := []struct {
		name   string
		runs   []cellRun
		tables int
		count  []string // per table
		cells  []want
	}{
		{
			name: "healthy srt: all right", runs: []cellRun{healthySRT(20)}, tables: 1,
			count: []string{"0 wrong, 0 not applicable, 10 right"},
			cells: []want{
				{"allowed http", srtCell.ID, Reached, Right, "ok 20/20"},
				{"allowed direct", srtCell.ID, Refused, Right, "ok 20/20"},
				{"denied socks", srtCell.ID, Refused, Right, "ok 20/20"},
				{"denied dns", srtCell.ID, Refused, Right, "ok 20/20"},
			},
		},
		{
			// The denied host reached over the proxy says nothing of the allowed host: untold,
			// never right.
			name: "open proxy: the denied host reached over the proxy channels is wrong", runs: []cellRun{openProxy(3), healthySRT(3)}, tables: 1,
			count: []string{"3 wrong, 0 not applicable, 14 right, 3 unjudged"},
			cells: []want{
				{"denied http", openProxyCell.ID, Refused, Wrong, "REACHED 3/3"},
				{"denied https", openProxyCell.ID, Refused, Wrong, "REACHED 3/3"},
				{"denied socks", openProxyCell.ID, Refused, Wrong, "REACHED 3/3"},
				{"denied direct", openProxyCell.ID, Refused, Right, "ok 3/3"},
				{"allowed http", openProxyCell.ID, Reached, Unjudged, "untold 3/3"},
				{"allowed dns", openProxyCell.ID, Refused, Right, "ok 3/3"},
				{"denied http", srtCell.ID, Refused, Right, "ok 3/3"},
			},
		},
		{
			// Its own table: the policy differs. The proxy channels are not applicable (counted),
			// the allowed host refused over direct and dns is right.
			name: "deny-all: the allowed host refused is right, n/a counted", runs: []cellRun{healthySRT(2), denyAll(4)}, tables: 2,
			count: []string{"0 wrong, 6 not applicable, 4 right", "0 wrong, 0 not applicable, 10 right"}, // the report orders cells by target
			cells: []want{
				{"allowed direct", bwrapCell.ID, Refused, Right, "ok 4/4"},
				{"allowed dns", bwrapCell.ID, Refused, Right, "ok 4/4"},
				{"allowed http", bwrapCell.ID, Refused, NotApplicable, "n/a"},
				{"denied socks", bwrapCell.ID, Refused, NotApplicable, "n/a"},
			},
		},
		{
			name: "fail-closed: a refusal and a dead proxy are wrong for the allowed host only", tables: 1,
			runs: []cellRun{{cell: srtCell, reach: srtReach, policy: true, trials: []model.Record{
				networkTrial(srtCell, 0, map[string]channel{model.ChanHTTPS: {model.AllowedBlocked, "allowed"}, model.ChanSOCKS: {model.ProxyDead, "proxy"}}),
				networkTrial(srtCell, 1, map[string]channel{model.ChanSOCKS: {model.ProxyDead, "proxy"}}),
				networkTrial(srtCell, 2, map[string]channel{model.ChanSOCKS: {model.HarnessError, ""}}),
			}}},
			count: []string{"2 wrong, 0 not applicable, 8 right"},
			cells: []want{
				{"allowed https", srtCell.ID, Reached, Wrong, "REFUSED 1/3"},
				{"denied https", srtCell.ID, Refused, Right, "ok 3/3"},
				{"allowed socks", srtCell.ID, Reached, Wrong, "DEAD 2/3"},
				{"denied socks", srtCell.ID, Refused, Right, "ok 2/3"},
			},
		},
		{
			// Reaching the allowed host around the proxy is wrong for it, and right for the
			// denied host; a fail-open whose breach names no host is wrong for both.
			name: "a fail-open is placed by its check, or marks both hosts", tables: 1,
			runs: []cellRun{{cell: srtCell, reach: srtReach, policy: true, trials: []model.Record{
				networkTrial(srtCell, 0, map[string]channel{model.ChanDirect: {model.NonEnforcing, "allowed"}, model.ChanDNS: {model.NonEnforcing, ""}}),
				networkTrial(srtCell, 1, nil),
			}}},
			count: []string{"3 wrong, 0 not applicable, 7 right"},
			cells: []want{
				{"allowed direct", srtCell.ID, Refused, Wrong, "REACHED 1/2"},
				{"denied direct", srtCell.ID, Refused, Right, "ok 2/2"},
				{"allowed dns", srtCell.ID, Refused, Wrong, "REACHED 1/2"},
				{"denied dns", srtCell.ID, Refused, Wrong, "REACHED 1/2"},
			},
		},
		{
			name: "a policy the report does not hold: the allowed host's expectation unknown", tables: 1,
			runs:  []cellRun{{cell: srtCell, trials: repeat(2, func(i int) model.Record { return networkTrial(srtCell, i, nil) })}},
			count: []string{"0 wrong, 0 not applicable, 10 right"},
			cells: []want{
				{"allowed http", srtCell.ID, Unknown, Right, "ok 2/2"},
				{"denied http", srtCell.ID, Refused, Right, "ok 2/2"},
			},
		},
		{
			// The control is not a case; a non-enforcing case is wrong, a dead proxy too (its
			// refusal proves nothing), n/a counted; aggregates are not cases.
			name: "bypass: a non-enforcing case is wrong", tables: 1,
			runs: []cellRun{{cell: srtCell, reach: srtReach, policy: true, trials: repeat(3, func(i int) model.Record {
				cases := map[string]channel{
					"bypass/matching/wildcard-apex": ok,
					"bypass/matching/nul":           ok,
					"bypass/matching/zone-id":       {o: model.NotApplicable},
				}
				if i == 1 {
					cases["bypass/matching/nul"] = channel{model.NonEnforcing, "connect:denied"}
					cases["bypass/matching/zone-id"] = channel{model.ProxyDead, "connect:proxy"}
				}
				return bypassTrial(srtCell, i, cases)
			})}},
			count: []string{"2 wrong, 0 not applicable, 1 right"},
			cells: []want{
				{"matching/wildcard-apex", srtCell.ID, Refused, Right, "ok 3/3"},
				{"matching/nul", srtCell.ID, Refused, Wrong, "REACHED 1/3"},
				{"matching/zone-id", srtCell.ID, Refused, Wrong, "DEAD 1/3"},
			},
		},
		{
			name: "bypass: not applicable in every trial", tables: 1,
			runs: []cellRun{{cell: bwrapCell, policy: true, trials: repeat(2, func(i int) model.Record {
				return bypassTrial(bwrapCell, i, map[string]channel{"bypass/matching/nul": {o: model.NotApplicable}})
			})}},
			count: []string{"0 wrong, 1 not applicable, 0 right"},
			cells: []want{{"matching/nul", bwrapCell.ID, Refused, NotApplicable, "n/a"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tables := Build(report(t, c.runs...), nil)
			if len(tables) != c.tables {
				t.Fatalf("%d tables, want %d", len(tables), c.tables)
			}
			for i, tab := range tables {
				if got := tab.Count().String(); got != c.count[i] {
					t.Errorf("table %d (%s): count %q, want %q", i, tab.Title, got, c.count[i])
				}
			}
			for _, w := range c.cells {
				var found bool
				for _, tab := range tables {
					for _, col := range tab.Columns {
						if col.CellID != w.cell {
							continue
						}
						found = true
						got := cellOf(t, tab, w.row, w.cell)
						if got.Mark != w.mark || got.Text() != w.text {
							t.Errorf("%s in %s: %v %q, want %v %q", w.row, w.cell, got.Mark, got.Text(), w.mark, w.text)
						}
						if e := rowOf(t, tab, w.row).Expected; e != w.expected {
							t.Errorf("%s: expected %q, want %q", w.row, e, w.expected)
						}
					}
				}
				if !found {
					t.Errorf("no table has column %s", w.cell)
				}
			}
		})
	}
}

// TestKnownStaysWrong: a failure known findings cover is still a wrong cell; the mark says so.
func TestKnownStaysWrong(t *testing.T) {
	rec := networkTrial(srtCell, 0, map[string]channel{model.ChanDNS: {model.NonEnforcing, "denied"}})
	for i := range rec.Scenarios {
		for j := range rec.Scenarios[i].Breaches {
			rec.Scenarios[i].Breaches[j].Known = "srt:network/channel/dns#dns:denied"
		}
	}
	tab := Build(report(t, cellRun{cell: srtCell, reach: srtReach, policy: true, trials: []model.Record{rec}}), nil)[0]
	if c := cellOf(t, tab, "denied dns", srtCell.ID); c.Mark != Wrong || c.Text() != "REACHED 1/1 (known)" {
		t.Errorf("known fail-open: %v %q, want wrong, REACHED 1/1 (known)", c.Mark, c.Text())
	}
}

// TestColumnsFollowCells: a run's cells choose the columns and their order.
func TestColumnsFollowCells(t *testing.T) {
	rep := report(t, healthySRT(1), openProxy(1))
	tab := Build(rep, []model.Cell{openProxyCell, srtCell})[0]
	if len(tab.Columns) != 2 || tab.Columns[0].CellID != openProxyCell.ID || tab.Columns[1].CellID != srtCell.ID {
		t.Fatalf("columns %+v, want open-proxy then healthy", tab.Columns)
	}
	if tabs := Build(rep, []model.Cell{srtCell}); len(tabs[0].Columns) != 1 {
		t.Fatalf("one cell asked, %d columns", len(tabs[0].Columns))
	}
}
