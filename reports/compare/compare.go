// Package compare sets a new report against a baseline: which cell x scenario rows got
// significantly worse (one-sided Fisher's exact test on failures over measured trials), which
// outcome kinds appeared that the baseline never saw, and which rows appeared or disappeared.
// `sandcheck compare base.json new.json` prints WriteText and exits 1 when Result.Failed().
package compare

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
	"github.com/sandcheck/sandcheck/reports/versiontable"
	"github.com/sandcheck/sandcheck/versions"
)

// knownAccepted is what compare accepts, as `run` does: every known finding. A known finding that
// appears where the baseline never showed its outcome is still a new outcome.
var knownAccepted = model.Accept{Every: true}

// DefaultAlpha is the significance level when the caller gives none.
const DefaultAlpha = 0.05

// Regression is a row whose failure rate rose significantly.
type Regression struct {
	Name                       string
	CellID, Scenario           string
	BaseFailures, BaseMeasured int
	NewFailures, NewMeasured   int
	P                          float64 // one-sided Fisher p-value
	FirstIn                    string  // compare --versions: the first version it appears in
}

// NewOutcome is an outcome kind a row shows now and never showed in the baseline.
type NewOutcome struct {
	Name     string
	Outcome  string
	Count    int
	Severity string
	What     string // for a fail-open outcome, what was breached, in its own terms
	FirstIn  string // compare --versions: the first version it appears in
}

// FailOpen is a cell whose trials fail open outside the known findings.
type FailOpen struct {
	Name   string
	Trials int
	What   string
}

// Result is the comparison. Rows are named as in the reports (target@host fault scenario).
type Result struct {
	Alpha       float64
	Compared    int // rows present in both
	Regressions []Regression
	NewOutcomes []NewOutcome
	// FailOpen lists the cells of the new report with fail-open trials no known finding covers
	// (model.Record.FailOpen under every known finding, as `run` judges): a finding whatever the
	// baseline showed.
	FailOpen    []FailOpen
	Disappeared []string // rows in the baseline only: a scenario that silently stopped running
	Added       []string // rows in the new report only
	// Target, From, To: set when two versions of one report were compared (Versions).
	Target, From, To string
}

// Failed is the exit-1 condition: a significant rise, or a fail-open outcome the baseline never
// had. The latter needs no significance: one escaped request is a finding, not noise.
func (r Result) Failed() bool {
	if len(r.Regressions) > 0 || len(r.FailOpen) > 0 {
		return true
	}
	for _, n := range r.NewOutcomes {
		if n.Severity == string(model.SevFailOpen) {
			return true
		}
	}
	return false
}

// Compare matches rows by cell ID and scenario. alpha <= 0 means DefaultAlpha.
func Compare(base, cur *schema.Report, alpha float64) (Result, error) {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if alpha >= 1 {
		return Result{}, fmt.Errorf("compare: alpha %v must be below 1", alpha)
	}
	res := Result{Alpha: alpha}
	baseRows := map[string]schema.Cell{}
	for _, c := range base.Cells {
		baseRows[c.Key()] = c
	}
	seen := map[string]bool{}
	for _, n := range cur.Cells {
		seen[n.Key()] = true
		b, ok := baseRows[n.Key()]
		if !ok {
			res.Added = append(res.Added, n.Name())
			continue
		}
		res.Compared++
		p, err := stats.FisherRose(b.Failures, b.Measured, n.Failures, n.Measured)
		if err != nil {
			return Result{}, fmt.Errorf("compare %s: %w", n.Name(), err)
		}
		if p < alpha {
			res.Regressions = append(res.Regressions, Regression{Name: n.Name(), CellID: n.CellID, Scenario: n.Scenario,
				BaseFailures: b.Failures, BaseMeasured: b.Measured, NewFailures: n.Failures, NewMeasured: n.Measured, P: p})
		}
		for o, cnt := range n.Outcomes {
			if cnt > 0 && b.Outcomes[o] == 0 && o != string(model.Correct) {
				sev := "unknown"
				if oc := model.Outcome(o); oc.Valid() {
					sev = string(oc.Severity())
				}
				no := NewOutcome{Name: n.Name(), Outcome: o, Count: cnt, Severity: sev}
				if sev == string(model.SevFailOpen) {
					no.What = n.Breached()
				}
				res.NewOutcomes = append(res.NewOutcomes, no)
			}
		}
	}
	// Fail-open no known finding covers (model.Record.FailOpen: a verdict, or egress no finding's
	// breach lists, in a trial that timed out or crashed too) is never the baseline's noise: it
	// fails the comparison whatever the baseline showed, as it fails `run`.
	for _, o := range cur.Overall {
		if n := o.FailOpenTrials(knownAccepted); n > 0 {
			res.FailOpen = append(res.FailOpen, FailOpen{Name: o.Name(), Trials: n, What: o.Breached()})
		}
	}
	for _, b := range base.Cells {
		if !seen[b.Key()] {
			res.Disappeared = append(res.Disappeared, b.Name())
		}
	}
	sort.Slice(res.Regressions, func(i, j int) bool { return res.Regressions[i].P < res.Regressions[j].P })
	sort.Slice(res.NewOutcomes, func(i, j int) bool {
		a, b := res.NewOutcomes[i], res.NewOutcomes[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Outcome < b.Outcome
	})
	sort.Strings(res.Disappeared)
	sort.Strings(res.Added)
	return res, nil
}

// WriteText renders the result for a terminal or a CI log.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	if r.From != "" {
		fmt.Fprintf(&b, "%s %s (baseline) vs %s: ", r.Target, r.From, r.To)
	}
	fmt.Fprintf(&b, "compared %d cell x scenario rows (one-sided Fisher, alpha %g)\n", r.Compared, r.Alpha)
	if len(r.Regressions) == 0 {
		b.WriteString("no significant regressions\n")
	}
	for _, g := range r.Regressions {
		fmt.Fprintf(&b, "REGRESSION %s: failures %d/%d (%.1f%%) -> %d/%d (%.1f%%), p=%.4g%s\n", g.Name,
			g.BaseFailures, g.BaseMeasured, 100*stats.Rate(g.BaseFailures, g.BaseMeasured),
			g.NewFailures, g.NewMeasured, 100*stats.Rate(g.NewFailures, g.NewMeasured), g.P, firstIn(g.FirstIn))
	}
	for _, n := range r.NewOutcomes {
		tag := "new outcome"
		if n.Severity == string(model.SevFailOpen) {
			tag = "NEW FAIL-OPEN OUTCOME"
		}
		what := ""
		if n.What != "" {
			what = ": " + n.What
		}
		fmt.Fprintf(&b, "%s %s: %s x%d (%s), never seen in the baseline%s%s\n", tag, n.Name, n.Outcome, n.Count, n.Severity, what, firstIn(n.FirstIn))
	}
	for _, f := range r.FailOpen {
		fmt.Fprintf(&b, "FAIL-OPEN %s: %d trial(s) fail open outside the known findings: %s\n", f.Name, f.Trials, f.What)
	}
	for _, d := range r.Disappeared {
		fmt.Fprintf(&b, "disappeared %s: in the baseline, not in the new report\n", d)
	}
	for _, a := range r.Added {
		fmt.Fprintf(&b, "new cell %s: not in the baseline\n", a)
	}
	if r.Failed() {
		b.WriteString("FAIL\n")
	} else {
		b.WriteString("OK\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// bandStart is the first version of the run of band versions that ends at to, never from or
// older; "" when to is not in a band.
func bandStart(t versiontable.Table, from, to string) string {
	band := map[string]bool{}
	for _, b := range t.Bands {
		band[b.Version] = true
	}
	i := slices.Index(t.Versions, to)
	if i < 0 || !band[to] {
		return ""
	}
	start := to
	for i--; i >= 0 && band[t.Versions[i]] && t.Versions[i] != from; i-- {
		start = t.Versions[i]
	}
	return start
}

func firstIn(v string) string {
	if v == "" {
		return ""
	}
	return "; first seen in " + v
}

// Files reads two report.json files and compares them.
func Files(basePath, newPath string, alpha float64) (Result, error) {
	base, err := schema.ReadFile(basePath)
	if err != nil {
		return Result{}, fmt.Errorf("compare: %w", err)
	}
	cur, err := schema.ReadFile(newPath)
	if err != nil {
		return Result{}, fmt.Errorf("compare: %w", err)
	}
	return Compare(base, cur, alpha)
}

// Versions compares two versions of one target within one report (a sweep, or a release
// qualification of a candidate against the pinned version): rows of version from are the
// baseline, rows of version to the new report, matched by everything but the version. target may
// be "" when the report holds versions of one target only. Every regression and new outcome
// names the first version in (from, to] where it appears, when the report holds the versions
// between (see reports/versiontable).
func Versions(rep *schema.Report, target, from, to string, alpha float64) (Result, error) {
	targets := map[string]map[string]bool{} // target -> versions present
	for _, c := range rep.Cells {
		if c.Version != "" {
			if targets[c.Target] == nil {
				targets[c.Target] = map[string]bool{}
			}
			targets[c.Target][c.Version] = true
		}
	}
	if target == "" {
		if len(targets) != 1 {
			names := make([]string, 0, len(targets))
			for t := range targets {
				names = append(names, t)
			}
			sort.Strings(names)
			if len(names) == 0 {
				return Result{}, fmt.Errorf("compare: the report holds no cells with a chosen version (run with versions: or --target NAME@VERSION)")
			}
			return Result{}, fmt.Errorf("compare: the report holds versions of %s; say which target", strings.Join(names, ", "))
		}
		for t := range targets {
			target = t
		}
	}
	have := targets[target]
	present := make([]string, 0, len(have))
	for v := range have {
		present = append(present, v)
	}
	versions.Sort(present)
	if len(present) == 0 {
		return Result{}, fmt.Errorf("compare: no versions of %s in the report", target)
	}
	if from == "" {
		from = present[0]
	}
	if to == "" {
		to = present[len(present)-1]
	}
	for _, v := range []string{from, to} {
		if !have[v] {
			return Result{}, fmt.Errorf("compare: %s %s is not in the report (versions: %s)", target, v, strings.Join(present, ", "))
		}
	}
	if from == to {
		return Result{}, fmt.Errorf("compare: both sides are %s %s (the report holds %s)", target, from, strings.Join(present, ", "))
	}
	pick := func(v string) *schema.Report {
		out := &schema.Report{SchemaVersion: rep.SchemaVersion}
		series := func(r schema.CellRef) schema.CellRef {
			s := r.Series()
			s.CellID = strings.Join([]string{s.Target, s.Host, s.Fault, s.Labels}, "|")
			s.Version = r.Version
			return s
		}
		for _, c := range rep.Cells {
			if c.Target == target && c.Version == v {
				c.CellRef = series(c.CellRef)
				out.Cells = append(out.Cells, c)
			}
		}
		for _, o := range rep.Overall {
			if o.Target == target && o.Version == v {
				o.CellRef = series(o.CellRef)
				out.Overall = append(out.Overall, o)
			}
		}
		return out
	}
	res, err := Compare(pick(from), pick(to), alpha)
	if err != nil {
		return Result{}, err
	}
	res.From, res.To, res.Target = from, to, target
	// The first version of each regression, from the version table of its series.
	first := map[string]string{} // row name at version to -> version
	lo, hi := versions.MustParse(from), versions.MustParse(to)
	for _, t := range versiontable.Build(rep, alpha) {
		if t.Series.Target != target {
			continue
		}
		for _, ch := range t.Changes {
			if ch.Kind == versiontable.KindBetter {
				continue
			}
			v, err := versions.Parse(ch.To)
			if err != nil || versions.Compare(v, lo) <= 0 || versions.Compare(v, hi) > 0 {
				continue
			}
			ref := t.Series
			ref.Version = to
			name := schema.Cell{CellRef: ref, Scenario: ch.Scenario}.Name()
			if _, ok := first[name]; !ok {
				first[name] = ch.To
			}
		}
	}
	// A new version inside a band (it did not start here): the band's first version after from.
	bandFrom := map[string]string{} // series name at version to -> version
	for _, t := range versiontable.Build(rep, alpha) {
		if t.Series.Target != target {
			continue
		}
		if v := bandStart(t, from, to); v != "" {
			ref := t.Series
			ref.Version = to
			bandFrom[ref.Name()] = v
		}
	}
	firstOf := func(name string) string {
		if v := first[name]; v != "" {
			return v
		}
		for series, v := range bandFrom {
			if strings.HasPrefix(name, series+" ") {
				return v
			}
		}
		return ""
	}
	for i := range res.Regressions {
		res.Regressions[i].FirstIn = firstOf(res.Regressions[i].Name)
	}
	for i := range res.NewOutcomes {
		res.NewOutcomes[i].FirstIn = firstOf(res.NewOutcomes[i].Name)
	}
	return res, nil
}
