// Package format renders a schema.Report for people and machines: report.json (the model itself),
// report.md (a bug report in the seed's shape, pastable into a GitHub issue), junit.xml (for CI
// dashboards) and report.html (one self-contained page). Each writer takes an io.Writer so the
// CLI, tests and `run` can send it anywhere; WriteAll writes the four files into a folder.
package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Options carry what the journals do not know: how the run was configured and reproduced.
type Options struct {
	Title    string // heading of report.md and report.html; "" = generated from the cells
	Settings string // sandbox settings / matrix excerpt used, shown verbatim
	Repro    string // the command that reproduces the run, shown verbatim
	Expected string // what a healthy sandbox does; "" = the design's definition of correct
}

// DefaultExpected is what DESIGN.md defines as a healthy trial, for every kind of scenario.
const DefaultExpected = "Deterministically `correct` in every trial of every scenario: the allowed host answers with its token " +
	"and the denied host is refused by policy, over every channel; writes stay inside the workspace and protected files " +
	"stay unreadable; a sandbox that cannot enforce refuses to start, loudly."

// Files are the names WriteAll uses.
const (
	JSONFile     = "report.json"
	MarkdownFile = "report.md"
	JUnitFile    = "junit.xml"
	HTMLFile     = "report.html"
)

// WriteJSON writes report.json.
func WriteJSON(w io.Writer, rep *schema.Report) error { return schema.Encode(w, rep) }

// WriteAll writes report.json, report.md, junit.xml and report.html into dir (created if
// missing). Each file is written to a temporary name and renamed, so a reader (or a CI artifact
// upload) never sees half a report.
func WriteAll(dir string, rep *schema.Report, opts Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	writers := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{JSONFile, func(w io.Writer) error { return WriteJSON(w, rep) }},
		{MarkdownFile, func(w io.Writer) error { return WriteMarkdown(w, rep, opts) }},
		{JUnitFile, func(w io.Writer) error { return WriteJUnit(w, rep) }},
		{HTMLFile, func(w io.Writer) error { return WriteHTML(w, rep, opts) }},
	}
	for _, wr := range writers {
		if err := writeFile(filepath.Join(dir, wr.name), wr.fn); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, fn func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// outcomeOrder lists outcome names in report order (model.All), then unknown ones sorted.
func outcomeOrder(m map[string]int) []string {
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

var allOrder = func() []string {
	var s []string
	for _, o := range model.All {
		s = append(s, string(o))
	}
	return s
}()

// severityOf names the severity of an outcome name, "unknown" for names classify does not know.
func severityOf(o string) string {
	oc := model.Outcome(o)
	if !oc.Valid() {
		return "unknown"
	}
	return string(oc.Severity())
}

// Evidence limits of the formats people read. report.json keeps each failing trial's evidence
// whole (up to the aggregator's cap); a page or an issue shows the head of it and says where the
// rest is, so a nightly of hundreds of cells stays a page a browser opens at once.
const (
	PageEvidenceBytes  = 16 << 10 // report.html and report.md, per example
	JUnitEvidenceBytes = 8 << 10  // junit.xml, per failing test case
)

// exampleEvidence is an example's evidence for reading, cut to limit bytes (0: whole), or why
// there is none to show. An example whose failures are all pinned known findings shows none:
// its evidence is in report.json, and repeating it in every cell of a nightly would bury the
// failures nobody has explained yet.
func exampleEvidence(rep *schema.Report, ex schema.Example, limit int) string {
	ev := rep.ExampleEvidence(ex)
	switch {
	case len(ev) > 0 && ex.Known:
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

func pct(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

func ciString(ci [2]float64) string { return fmt.Sprintf("%s – %s", pct(ci[0]), pct(ci[1])) }

// title is the report's heading: the user's, or the cells it covers.
func title(rep *schema.Report, opts Options) string {
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

// verdict is a one-line judgement of a row, used by the markdown summary and HTML.
func verdict(c schema.Counts) string {
	switch {
	case c.Measured == 0 && c.Trials == 0:
		return "no trials"
	case c.Measured == 0:
		return fmt.Sprintf("nothing measured in %d trials (%s)", c.Trials, schema.OutcomeList(c.Outcomes, allOrder))
	case c.Failures == 0:
		r3 := 1.0
		if c.RuleOfThree != nil {
			r3 = *c.RuleOfThree
		}
		return fmt.Sprintf("0 of %d measured trials failed (rule of three: rate < %s)", c.Measured, pct(r3))
	}
	return fmt.Sprintf("%d of %d measured trials failed (%s, 95%% CI %s): %s", c.Failures, c.Measured,
		pct(c.FailureRate), ciString(c.CI95), schema.OutcomeList(c.FailingOutcomes, allOrder))
}

// pace is a cell's mean trial time and the trials per minute one slot (a -j worker, a VM guest)
// runs at, after sep; "" when no durations were recorded.
func pace(c schema.Counts, sep string) string {
	if c.Trials == 0 || c.DurationMS <= 0 {
		return ""
	}
	mean := float64(c.DurationMS) / float64(c.Trials) / 1000
	return fmt.Sprintf("%smean trial %.1f s (%.1f trials/min)", sep, mean, 60/mean)
}

// knownNote marks the row's failures that known findings cover. They stay failures: the note
// says so, so a reader never takes "known" for "fine".
func knownNote(c schema.Counts) string {
	var parts []string
	for _, id := range c.KnownIDs() {
		parts = append(parts, fmt.Sprintf("known finding %s in %d of %d trials", id, c.Known[id].Trials, c.Trials))
	}
	return strings.Join(parts, "; ")
}

// fixedNote names the known findings keyed to the row that showed in none of its trials.
func fixedNote(c schema.Counts) string {
	var parts []string
	for _, id := range c.Fixed() {
		parts = append(parts, fmt.Sprintf("known finding %s did not reproduce in any of %d trials (fixed?)", id, c.Trials))
	}
	return strings.Join(parts, "; ")
}

// details is what a row adds to its verdict: what its fail-open trials breached, in the
// breach's own terms, and the known findings that did or did not show.
func details(c schema.Counts) []string {
	var d []string
	if c.FailOpen > 0 {
		d = append(d, "breached: "+c.Breached())
	}
	for _, n := range []string{knownNote(c), fixedNote(c)} {
		if n != "" {
			d = append(d, n)
		}
	}
	return d
}

// failOpenWhat lists what a cell's fail-open trials breached, scenario by scenario, and the
// trial-level egress no scenario reported.
func failOpenWhat(rep *schema.Report, o schema.Overall) []string {
	var out []string
	for _, c := range rep.Cells {
		if c.CellID == o.CellID && c.FailOpen > 0 {
			out = append(out, c.Scenario+": "+c.Breached())
		}
	}
	if o.TrialFailOpen > 0 || (len(out) == 0 && o.FailOpen > 0) {
		out = append(out, "outside any scenario: "+o.Breached())
	}
	return out
}
