// Package markdown writes report.md: a bug report in the seed's shape (Summary, Environment,
// Settings, Repro, Observed, Expected, Evidence), pastable into a GitHub issue, with a version
// table per series of versions.
package markdown

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/reports/truthtable"
)

// mdCell makes text safe inside a Markdown table cell: no pipes, no raw HTML, one line.
func mdCell(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "\r\n", "<br>", "\n", "<br>", "\r", "<br>")
	return r.Replace(s)
}

var backticks = regexp.MustCompile("`+")

// fence returns a code fence longer than any backtick run in s, so probe output that itself
// contains ``` cannot close the block and spill into the issue as markup.
func fence(s string) string {
	n := 3
	for _, m := range backticks.FindAllString(s, -1) {
		if len(m) >= n {
			n = len(m) + 1
		}
	}
	return strings.Repeat("`", n)
}

func codeBlock(w io.Writer, lang, body string) {
	f := fence(body)
	fmt.Fprintf(w, "%s%s\n%s\n%s\n", f, lang, strings.TrimRight(body, "\n"), f)
}

// Write writes report.md in the shape of the seed bug report: Summary (with the version and
// truth tables), Environment, Settings, Repro, Observed, Expected, then one example's evidence
// per outcome.
func Write(w io.Writer, rep *schema.Report, opts wording.Options) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	p("# %s\n\n", mdCell(wording.Title(rep, opts)))
	p("## Summary\n\n")
	if len(rep.Overall) == 0 {
		p("No trials were recorded: the run measured nothing.\n\n")
	}
	for _, o := range rep.Overall {
		p("- **%s**: %s.", mdCell(o.Name()), mdCell(wording.Verdict(o.Counts)))
		if o.FailOpen > 0 {
			p(" **Fail-open in %d trial(s): %s.**", o.FailOpen, mdCell(strings.Join(wording.FailOpenWhat(rep, o), "; ")))
		}
		p("\n")
		// Known findings stay in view: named where they showed, and flagged when they no longer do.
		for _, c := range rep.Cells {
			if c.CellID != o.CellID {
				continue
			}
			for _, id := range c.KnownIDs() {
				k := c.Known()[id]
				p("  - %s: **known finding** `%s` in %d of %d trials: %s (still a failure; the gate passes it only if its policy accepts it: `accept_known`).\n",
					mdCell(c.Scenario), mdCell(id), k.Trials, c.Trials, mdCell(c.Breached()))
			}
			for _, id := range c.Fixed() {
				p("  - %s: known finding `%s` did not reproduce in any of %d trials (fixed?).\n", mdCell(c.Scenario), mdCell(id), c.Trials)
			}
		}
	}
	for _, cf := range rep.CoFailures {
		for _, g := range cf.Groups {
			p("- %s: %s failed together in %d of %d trials: likely one cause.\n", mdCell(cf.Name()),
				mdCell(strings.Join(g.Scenarios, ", ")), g.Failures, cf.Trials)
		}
	}
	p("\nGenerated %s by sandcheck %s from run(s) %s.\n\n", rep.GeneratedAt.Format("2006-01-02 15:04:05Z07:00"),
		wording.OrUnknown(rep.SandcheckVersion), mdCell(strings.Join(rep.RunIDs, ", ")))
	writeVersionTables(bw, rep)
	if err := truthtable.WriteMarkdown(bw, rep); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}

	p("## Environment\n\n")
	hosts := wording.HostNames(rep)
	if len(hosts) == 0 {
		p("No host fingerprint was recorded.\n\n")
	}
	for _, h := range hosts {
		p("### Host `%s`\n\n| | |\n|---|---|\n", strings.ReplaceAll(h, "`", "'"))
		for _, r := range wording.HostEnv(rep, h) {
			p("| %s | %s |\n", mdCell(r[0]), mdCell(r[1]))
		}
		p("\n")
	}

	p("## Settings\n\n")
	if opts.Settings != "" {
		if opts.SettingsOf != "" {
			p("%s\n\n", mdCell(wording.SettingsNote("`"+opts.SettingsOf+"`")))
		}
		codeBlock(bw, "", opts.Settings)
	} else {
		p("Not recorded.\n")
	}
	if rep.Until != nil {
		p("\nAdaptive stopping: SPRT `%s`, alpha %g, beta %g, max %d trials.\n", rep.Until.Hypotheses, rep.Until.Alpha, rep.Until.Beta, rep.Until.Max)
	}
	p("\n## Repro\n\n")
	if opts.Repro != "" {
		codeBlock(bw, "sh", opts.Repro)
	} else {
		p("Not recorded.\n")
	}

	p("\n## Observed\n\n")
	for _, o := range rep.Overall {
		p("### %s\n\n%d trials, %d measured (harness errors, timeouts and not-applicable are counted apart)%s.\n\n", mdCell(o.Name()), o.Trials, o.Measured, wording.Pace(o.Counts, "; "))
		p("| outcome | severity | count | rate | 95%% CI |\n|---|---|---:|---:|---|\n")
		for _, name := range wording.OutcomeOrder(o.Outcomes) {
			n := o.Outcomes[name]
			ci := wording.Wilson(n, o.Trials)
			p("| `%s` | %s | %d | %s | %s |\n", name, wording.SeverityOf(name), n, wording.Pct(float64(n)/float64(max(o.Trials, 1))), wording.CIString(ci))
		}
		p("\n| scenario | measured | failures | failure rate | 95%% CI (Wilson) | exact (Clopper-Pearson) | note |\n|---|---:|---:|---:|---|---|---|\n")
		for _, c := range rep.Cells {
			if c.CellID != o.CellID {
				continue
			}
			p("| %s | %d | %d | %s | %s | %s | %s |\n", mdCell(c.Scenario), c.Measured, c.Failures, wording.Pct(c.FailureRate),
				wording.CIString(c.CI95), wording.CIString(c.ClopperPearson), mdCell(rowNote(c.Counts)))
		}
		p("\n")
	}

	p("## Expected\n\n%s\n\n", wording.OrDefault(opts.Expected, wording.DefaultExpected))

	p("## Evidence\n\nOne example trial per outcome and cell.\n\n")
	for _, o := range rep.Overall {
		for _, name := range wording.OutcomeOrder(o.Outcomes) {
			ex, ok := o.Examples[name]
			if !ok {
				continue
			}
			sum := fmt.Sprintf("%s · %s · trial %d (run %s)", o.Name(), name, ex.Trial, ex.RunID)
			if ex.Hint != "" {
				sum += ": " + ex.Hint
			}
			// A blank line after <summary> lets GitHub render the fenced block inside <details>.
			p("<details><summary>%s</summary>\n\n", mdCell(sum))
			if ex.Error != "" {
				p("Harness error: %s\n\n", mdCell(ex.Error))
			}
			codeBlock(bw, "json", wording.ExampleEvidence(rep, ex, wording.PageEvidenceBytes, opts.KnownEvidence))
			p("\n</details>\n\n")
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}
	return nil
}

// rowNote says what a clean row does and does not show, or the SPRT verdict.
func rowNote(c schema.Counts) string {
	var notes []string
	if c.Failures == 0 && c.RuleOfThree != nil && c.Measured > 0 {
		notes = append(notes, fmt.Sprintf("rule of three: < %s", wording.Pct(*c.RuleOfThree)))
	}
	if c.TrialsNeeded != nil && c.TrialsNeeded.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more clean trials to claim < %s", c.TrialsNeeded.More, wording.Pct(c.TrialsNeeded.Rate)))
	}
	if c.SPRT != nil {
		notes = append(notes, fmt.Sprintf("SPRT %s after %d", c.SPRT.Decision, c.SPRT.Trials))
	}
	if c.FailOpen > 0 {
		notes = append(notes, fmt.Sprintf("FAIL-OPEN x%d: %s", c.FailOpen, c.Breached()))
	}
	for _, n := range []string{wording.KnownNote(c), wording.FixedNote(c)} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if h := c.Trials - c.Measured; h > 0 {
		notes = append(notes, fmt.Sprintf("%d not measured", h))
	}
	return strings.Join(notes, "; ")
}
