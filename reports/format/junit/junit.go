// Package junit writes junit.xml for CI dashboards: a <testsuite> per cell, a <testcase> per
// scenario, failures with their evidence.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// The JUnit dialect below is the common subset Jenkins, GitLab, GitHub test reporters and the
// npm parsers agree on: <testsuites> of <testsuite> (one per cell) of <testcase> (one per
// scenario), with <properties>, <failure>, <error>, <skipped> and <system-out>.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitTally
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitTally
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

// junitTally is what <testsuites> and each <testsuite> count, in their attributes.
type junitTally struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

// add counts a suite's test cases into the whole (the time is summed apart, in milliseconds).
func (t *junitTally) add(s junitTally) {
	t.Tests += s.Tests
	t.Failures += s.Failures
	t.Errors += s.Errors
	t.Skipped += s.Skipped
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitMessage   `xml:"failure,omitempty"`
	Error      *junitMessage   `xml:"error,omitempty"`
	Skipped    *junitMessage   `xml:"skipped,omitempty"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

// Bodies are CDATA so evidence stays readable in raw XML (encoding/xml splits a "]]>" inside it);
// xmlSafe first removes what XML 1.0 cannot carry at all, such as terminal escapes.
type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",cdata"`
}

type junitText struct {
	Body string `xml:",cdata"`
}

// xmlSafe replaces characters XML 1.0 forbids (most C0 controls, e.g. ESC in colored probe
// output) with a visible \xNN, so one stray byte cannot make the whole file unparseable.
func xmlSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF && r != 0xFFFE && r != 0xFFFF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "\\x%02x", r)
		}
	}
	return b.String()
}

// Write writes junit.xml: one testcase per cell x scenario. A testcase fails when any
// measured trial failed (the message carries counts and the interval, the body one example's
// evidence per failing outcome); it errors when nothing was measured because of harness trouble
// or timeouts; it is skipped when every trial was not-applicable.
func Write(w io.Writer, rep *schema.Report) error {
	doc := junitSuites{Name: "sandcheck"}
	var totalMS int64
	for _, o := range rep.Overall {
		s := junitSuite{
			Name:       "sandcheck/" + o.Name(),
			junitTally: junitTally{Time: seconds(o.DurationMS)},
			Timestamp:  rep.GeneratedAt.Format("2006-01-02T15:04:05"),
			Hostname:   o.Host,
			Properties: []junitProperty{
				{"cell_id", o.CellID}, {"target", o.Target}, {"host", o.Host}, {"user", o.User}, {"fault", o.Fault},
				{"trials", fmt.Sprint(o.Trials)}, {"measured", fmt.Sprint(o.Measured)}, {"failures", fmt.Sprint(o.Failures)},
			},
		}
		totalMS += o.DurationMS
		for _, c := range rep.Cells {
			if c.CellID != o.CellID {
				continue
			}
			tc := junitCase{Name: c.Scenario, Classname: classname(c.CellRef), Time: "0", Properties: caseProps(c)}
			switch {
			case c.Failures > 0:
				tc.Failure = &junitMessage{Message: xmlSafe(strings.Join(append([]string{wording.Verdict(c.Counts)}, wording.Details(c.Counts)...), "; ")), Type: worstFailing(c.FailingOutcomes), Body: xmlSafe(failureBody(rep, c))}
				s.Failures++
			case c.Measured == 0 && c.Trials > 0 && c.Outcomes[string(model.NotApplicable)] == c.Trials:
				tc.Skipped = &junitMessage{Message: "not applicable to this target in every trial"}
				s.Skipped++
			case c.Measured == 0:
				tc.Error = &junitMessage{Message: xmlSafe(wording.Verdict(c.Counts)), Type: "unmeasured", Body: xmlSafe(failureBody(rep, c))}
				s.Errors++
			default:
				tc.SystemOut = &junitText{xmlSafe(strings.Join(append([]string{wording.Verdict(c.Counts)}, wording.Details(c.Counts)...), "; "))}
			}
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		doc.add(s.junitTally)
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = seconds(totalMS)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	return nil
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// classname groups testcases by cell in JUnit viewers, which split it on dots.
func classname(c schema.CellRef) string {
	target := c.Target
	if c.Version != "" {
		target += "-" + c.Version // srt-0_0_60: one class per version, dots kept out
	}
	parts := []string{"sandcheck", target, c.Host}
	if c.User != "" {
		parts = append(parts, "user-"+c.User)
	}
	if c.Fault != "" {
		parts = append(parts, "fault-"+c.Fault)
	}
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, ".", "_")
	}
	return strings.Join(parts, ".")
}

func caseProps(c schema.Cell) []junitProperty {
	props := []junitProperty{
		{"trials", fmt.Sprint(c.Trials)},
		{"measured", fmt.Sprint(c.Measured)},
		{"failures", fmt.Sprint(c.Failures)},
		{"failure_rate", fmt.Sprintf("%.6f", c.FailureRate)},
		{"ci95_low", fmt.Sprintf("%.6f", c.CI95[0])},
		{"ci95_high", fmt.Sprintf("%.6f", c.CI95[1])},
	}
	for _, o := range wording.OutcomeOrder(c.Outcomes) {
		props = append(props, junitProperty{"outcome." + o, fmt.Sprint(c.Outcomes[o])})
	}
	return props
}

// worstFailing names the most severe failing outcome: the one a dashboard should show.
func worstFailing(m map[string]int) string {
	var os []model.Outcome
	for o := range m {
		os = append(os, model.Outcome(o))
	}
	return string(model.Worst(os...))
}

func failureBody(rep *schema.Report, c schema.Cell) string {
	var b strings.Builder
	for _, o := range wording.OutcomeOrder(c.Outcomes) {
		ex, ok := c.Examples[o]
		if !ok || (ex.Pass && c.Measured > 0) {
			continue
		}
		fmt.Fprintf(&b, "== %s x%d: example trial %d (run %s)\n", o, c.Outcomes[o], ex.Trial, ex.RunID)
		if ex.Hint != "" {
			fmt.Fprintf(&b, "hint: %s\n", ex.Hint)
		}
		if ex.Error != "" {
			fmt.Fprintf(&b, "error: %s\n", ex.Error)
		}
		b.WriteString(wording.ExampleEvidence(rep, ex, wording.JUnitEvidenceBytes, false))
		b.WriteString("\n\n")
	}
	return b.String()
}
