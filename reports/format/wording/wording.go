// Package wording is what the formats people read (report.md, report.html, junit.xml) say alike
// of a report: the title, a row's verdict and notes, rates and intervals, outcomes in report
// order with their severities, a trial's evidence cut for a page, the environment table of a host
// and the cells of a version table. The formats differ in markup only.
package wording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/stats"
)

// Options carry what the journals do not know: how the run was configured and reproduced.
type Options struct {
	Title    string // heading of report.md and report.html; "" = generated from the cells
	Settings string // sandbox settings / matrix excerpt used, shown verbatim
	// SettingsOf names the scenario whose own session ran with Settings, where each scenario of
	// the trial ran with settings of its own (schema.Report.SettingsOf).
	SettingsOf string
	Repro      string // the command that reproduces the run, shown verbatim
	Expected   string // what a healthy sandbox does; "" = the design's definition of correct
	// KnownEvidence shows the evidence of failures known findings cover in full, which reports
	// of nightly runs leave in report.json: a bug report's reader needs exactly that evidence.
	KnownEvidence bool
}

// SettingsNote introduces the settings of one scenario's own session; "" when the trial had one
// session's settings (no scenario named).
func SettingsNote(scenario string) string {
	if scenario == "" {
		return ""
	}
	return "Each scenario of these trials ran with settings of its own (every one's are in its evidence); these are the ones " + scenario + " ran with:"
}

// DefaultExpected is what DESIGN.md defines as a healthy trial, for every kind of scenario.
const DefaultExpected = "Deterministically `correct` in every trial of every scenario: the allowed host answers with its token " +
	"and the denied host is refused by policy, over every channel; writes stay inside the workspace and protected files " +
	"stay unreadable; a sandbox that cannot enforce refuses to start, loudly."

// Evidence limits of the formats people read. report.json keeps each failing trial's evidence
// whole (up to the aggregator's cap); a page or an issue shows the head of it and says where the
// rest is, so a nightly of hundreds of cells stays a page a browser opens at once.
const (
	PageEvidenceBytes  = 16 << 10 // report.html and report.md, per example
	JUnitEvidenceBytes = 8 << 10  // junit.xml, per failing test case
)

// OutcomeOrder lists outcome names in report order (model.All), then unknown ones sorted.
func OutcomeOrder(m map[string]int) []string {
	var out []string
	known := map[string]bool{}
	for _, o := range model.All {
		known[string(o)] = true
		if _, ok := m[string(o)]; ok {
			out = append(out, string(o))
		}
	}
	var rest []string
	for o := range m {
		if !known[o] {
			rest = append(rest, o)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// AllOrder is every outcome name, in report order (model.All).
var AllOrder = func() []string {
	var s []string
	for _, o := range model.All {
		s = append(s, string(o))
	}
	return s
}()

// SeverityOf names the severity of an outcome name, "unknown" for names classify does not know.
func SeverityOf(o string) string {
	oc := model.Outcome(o)
	if !oc.Valid() {
		return "unknown"
	}
	return string(oc.Severity())
}

// ExampleEvidence is an example's evidence for reading, cut to limit bytes (0: whole), or why
// there is none to show. An example whose failures are all pinned known findings shows none
// unless known says to (a bug report, Options.KnownEvidence): its evidence is in report.json, and
// repeating it in every cell of a nightly would bury the failures nobody has explained yet.
func ExampleEvidence(rep *schema.Report, ex schema.Example, limit int, known bool) string {
	ev := rep.ExampleEvidence(ex)
	switch {
	case len(ev) > 0 && ex.Known && !known:
		return fmt.Sprintf("(every failure here is a known finding: the evidence of trial %d is in report.json, evidence[%q])", ex.Trial, ex.EvidenceRef)
	case len(ev) > 0:
		text := prettyEvidence(ev)
		if limit > 0 && len(text) > limit {
			cut := strings.ToValidUTF8(text[:limit], "")
			where := "report.json"
			if ex.EvidenceRef != "" {
				where = fmt.Sprintf("report.json, evidence[%q]", ex.EvidenceRef)
			}
			text = fmt.Sprintf("%s\n… (cut here: %d more bytes; the whole evidence is in %s)", cut, len(text)-len(cut), where)
		}
		return text
	case ex.Pass:
		return fmt.Sprintf("(a passing trial: reports keep the evidence of failures only; see trial %d of run %s in the journal)", ex.Trial, ex.RunID)
	}
	return prettyEvidence(nil)
}

// prettyEvidence indents evidence JSON for reading; evidence that is a JSON string (e.g. a
// captured stderr) is shown unquoted so its newlines read as newlines. It re-encodes without
// Go's HTML escaping (\u003c) so a reader sees the probe's bytes; every format escapes for its
// own context afterwards.
func prettyEvidence(ev json.RawMessage) string {
	if len(ev) == 0 {
		return "(no evidence recorded)"
	}
	var s string
	if json.Unmarshal(ev, &s) == nil {
		return s
	}
	dec := json.NewDecoder(bytes.NewReader(ev))
	dec.UseNumber() // keep numbers exactly as recorded
	var v any
	if dec.Decode(&v) != nil {
		return string(ev)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(ev)
	}
	return strings.TrimRight(buf.String(), "\n")
}

func Pct(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

func CIString(ci [2]float64) string { return fmt.Sprintf("%s – %s", Pct(ci[0]), Pct(ci[1])) }

// Title is the report's heading: the user's, or the cells it covers.
func Title(rep *schema.Report, opts Options) string {
	if opts.Title != "" {
		return opts.Title
	}
	var names []string
	seen := map[string]bool{}
	for _, o := range rep.Overall {
		n := o.Target + "@" + o.Host
		if o.User != "" {
			n += " as " + o.User
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
	}
	if len(names) == 0 {
		return "sandcheck report (no trials)"
	}
	return "sandcheck report: " + strings.Join(names, ", ")
}

// Verdict is a one-line judgement of a row, used by the markdown summary and HTML.
func Verdict(c schema.Counts) string {
	switch {
	case c.Measured == 0 && c.Trials == 0:
		return "no trials"
	case c.Measured == 0:
		return fmt.Sprintf("nothing measured in %d trials (%s)", c.Trials, schema.OutcomeList(c.Outcomes, AllOrder))
	case c.Failures == 0:
		r3 := 1.0
		if c.RuleOfThree != nil {
			r3 = *c.RuleOfThree
		}
		return fmt.Sprintf("0 of %d measured trials failed (rule of three: rate < %s)", c.Measured, Pct(r3))
	}
	return fmt.Sprintf("%d of %d measured trials failed (%s, 95%% CI %s): %s", c.Failures, c.Measured,
		Pct(c.FailureRate), CIString(c.CI95), schema.OutcomeList(c.FailingOutcomes, AllOrder))
}

// Pace is a cell's mean trial time and the trials per minute one slot (a -j worker, a VM guest)
// runs at, after sep; "" when no durations were recorded.
func Pace(c schema.Counts, sep string) string {
	if c.Trials == 0 || c.DurationMS <= 0 {
		return ""
	}
	mean := float64(c.DurationMS) / float64(c.Trials) / 1000
	return fmt.Sprintf("%smean trial %.1f s (%.1f trials/min)", sep, mean, 60/mean)
}

// KnownNote marks the row's failures that known findings cover. They stay failures: the note
// says so, so a reader never takes "known" for "fine".
func KnownNote(c schema.Counts) string {
	var parts []string
	known := c.Known()
	for _, id := range c.KnownIDs() {
		parts = append(parts, fmt.Sprintf("known finding %s in %d of %d trials", id, known[id].Trials, c.Trials))
	}
	return strings.Join(parts, "; ")
}

// FixedNote names the known findings keyed to the row that showed in none of its trials.
func FixedNote(c schema.Counts) string {
	var parts []string
	for _, id := range c.Fixed() {
		parts = append(parts, fmt.Sprintf("known finding %s did not reproduce in any of %d trials (fixed?)", id, c.Trials))
	}
	return strings.Join(parts, "; ")
}

// Details is what a row adds to its verdict: what its fail-open trials breached, in the
// breach's own terms, and the known findings that did or did not show.
func Details(c schema.Counts) []string {
	var d []string
	if c.FailOpen > 0 {
		d = append(d, "breached: "+c.Breached())
	}
	for _, n := range []string{KnownNote(c), FixedNote(c)} {
		if n != "" {
			d = append(d, n)
		}
	}
	return d
}

// FailOpenWhat lists what a cell's fail-open trials breached, scenario by scenario, and the
// trial-level egress no scenario reported.
func FailOpenWhat(rep *schema.Report, o schema.Overall) []string {
	var out []string
	for _, c := range rep.Cells {
		if c.CellID == o.CellID && c.FailOpen > 0 {
			out = append(out, c.Scenario+": "+c.Breached())
		}
	}
	if o.BreachList() != "" || (len(out) == 0 && o.FailOpen > 0) {
		out = append(out, "outside any scenario: "+o.Breached())
	}
	return out
}

// Wilson is the Wilson 95% interval of k in n, as a pair.
func Wilson(k, n int) [2]float64 {
	iv := stats.Wilson(k, n)
	return [2]float64{iv.Low, iv.High}
}

// Clean says a row has nothing to show but a pass: every trial correct, nothing known, nothing
// fixed. Such rows are listed in a line each rather than drawn, so a cell's section grows with
// what went wrong, not with the number of scenarios.
func Clean(c schema.Counts) bool {
	return c.Trials > 0 && c.Failures == 0 && c.Outcomes[string(model.Correct)] == c.Trials &&
		len(c.Decisions) == 0 && len(c.Fixed()) == 0
}

func HostNames(rep *schema.Report) []string {
	seen := map[string]bool{}
	var out []string
	for h := range rep.Hosts {
		seen[h] = true
		out = append(out, h)
	}
	// Hosts that ran trials but recorded no fingerprint still get a table of "unknown".
	for _, o := range rep.Overall {
		if k, _ := rep.Fingerprint(o.Host, o.User, o.Target); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func OrUnknown(s string) string { return OrDefault(s, "unknown") }

func OrDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
