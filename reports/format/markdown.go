package format

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// envRow is one line of the Environment table: a label and the fingerprint keys that may hold it.
// The doctor's fingerprint may spell keys several ways (or nest them); we match on normalised
// dotted keys and their last segment, and print "unknown" rather than drop a row, because a bug
// report that silently omits "WSL networking mode" invites the wrong guess.
type envRow struct {
	label string
	keys  []string
}

var envRows = []envRow{
	{"kernel", []string{"kernel", "kernel_release", "uname", "uname_r"}},
	{"distro", []string{"distro", "os_release", "pretty_name", "os"}},
	{"WSL version", []string{"wsl_version", "wsl.version"}},
	{"WSL networking mode", []string{"wsl_networking", "wsl_networking_mode", "wsl.networking_mode", "wsl.networking", "networking_mode"}},
	{"bubblewrap", []string{"bwrap", "bwrap_version", "bubblewrap", "versions.bwrap"}},
	{"socat", []string{"socat", "socat_version", "versions.socat"}},
	{"node", []string{"node", "node_version", "versions.node"}},
	{"sandbox", []string{"sandbox", "sandbox_version", "sandbox_runtime", "srt", "srt_version", "versions.sandbox", "versions.srt"}},
	{"userns sysctls", []string{"userns", "userns_sysctls", "sysctls", "sysctl"}},
	{"proxy env", []string{"proxy_env", "env_proxy"}},
	{"curlrc", []string{"curlrc"}},
	{"git proxy", []string{"git_proxy", "git_http_proxy", "git.http.proxy"}},
}

type kv struct{ key, val string }

// flatten turns a fingerprint into dotted keys with scalar values, in key order.
func flatten(prefix string, v any, out *[]kv) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && prefix != "" {
			*out = append(*out, kv{prefix, "(none)"})
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x[k], out)
		}
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			b, _ := json.Marshal(e)
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(b))
			}
		}
		*out = append(*out, kv{prefix, strings.Join(parts, ", ")})
	case nil:
		*out = append(*out, kv{prefix, "absent"})
	case string:
		if x == "" {
			x = "(empty)"
		}
		*out = append(*out, kv{prefix, x})
	default:
		b, _ := json.Marshal(x)
		*out = append(*out, kv{prefix, string(b)})
	}
}

func normKey(k string) string { return strings.ToLower(strings.ReplaceAll(k, "-", "_")) }

// envTable matches fingerprint keys to the standard rows, then lists what is left over.
func envTable(fp json.RawMessage) [][2]string {
	var flat []kv
	var v any
	if len(fp) > 0 && json.Unmarshal(fp, &v) == nil {
		if _, ok := v.(map[string]any); ok {
			flatten("", v, &flat)
		}
	}
	used := make([]bool, len(flat))
	var rows [][2]string
	for _, r := range envRows {
		var vals []string
		for _, cand := range r.keys {
			for i, e := range flat {
				if used[i] {
					continue
				}
				k := normKey(e.key)
				last := k[strings.LastIndex(k, ".")+1:]
				switch {
				case k == cand || (!strings.Contains(cand, ".") && last == cand):
					vals = append(vals, e.val)
				case strings.HasPrefix(k, cand+"."):
					vals = append(vals, e.key[len(cand)+1:]+"="+e.val)
				default:
					continue
				}
				used[i] = true
			}
			if len(vals) > 0 {
				break
			}
		}
		val := "unknown"
		if len(vals) > 0 {
			val = strings.Join(vals, "; ")
		}
		rows = append(rows, [2]string{r.label, val})
	}
	for i, e := range flat {
		if !used[i] {
			rows = append(rows, [2]string{e.key, e.val})
		}
	}
	return rows
}

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

// WriteMarkdown writes report.md in the shape of the seed bug report: Summary, Environment,
// Settings, Repro, Observed, Expected, then one example's evidence per outcome.
func WriteMarkdown(w io.Writer, rep *schema.Report, opts Options) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	p("# %s\n\n", mdCell(title(rep, opts)))
	p("## Summary\n\n")
	if len(rep.Overall) == 0 {
		p("No trials were recorded: the run measured nothing.\n\n")
	}
	for _, o := range rep.Overall {
		p("- **%s**: %s.", mdCell(o.Name()), mdCell(verdict(o.Counts)))
		if o.FailOpen > 0 {
			p(" **Fail-open in %d trial(s): %s.**", o.FailOpen, mdCell(strings.Join(failOpenWhat(rep, o), "; ")))
		}
		p("\n")
		// Known findings stay in view: named where they showed, and flagged when they no longer do.
		for _, c := range rep.Cells {
			if c.CellID != o.CellID {
				continue
			}
			for _, id := range c.KnownIDs() {
				k := c.Known[id]
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
		orUnknown(rep.SandcheckVersion), mdCell(strings.Join(rep.RunIDs, ", ")))
	writeVersionTablesMD(bw, rep)

	p("## Environment\n\n")
	hosts := hostNames(rep)
	if len(hosts) == 0 {
		p("No host fingerprint was recorded.\n\n")
	}
	for _, h := range hosts {
		p("### Host `%s`\n\n| | |\n|---|---|\n", strings.ReplaceAll(h, "`", "'"))
		for _, r := range hostEnv(rep, h) {
			p("| %s | %s |\n", mdCell(r[0]), mdCell(r[1]))
		}
		p("\n")
	}

	p("## Settings\n\n")
	if opts.Settings != "" {
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
		p("### %s\n\n%d trials, %d measured (harness errors, timeouts and not-applicable are counted apart)%s.\n\n", mdCell(o.Name()), o.Trials, o.Measured, pace(o.Counts, "; "))
		p("| outcome | severity | count | rate | 95%% CI |\n|---|---|---:|---:|---|\n")
		for _, name := range outcomeOrder(o.Outcomes) {
			n := o.Outcomes[name]
			ci := wilsonOf(n, o.Trials)
			p("| `%s` | %s | %d | %s | %s |\n", name, severityOf(name), n, pct(float64(n)/float64(max(o.Trials, 1))), ciString(ci))
		}
		p("\n| scenario | measured | failures | failure rate | 95%% CI (Wilson) | exact (Clopper-Pearson) | note |\n|---|---:|---:|---:|---|---|---|\n")
		for _, c := range rep.Cells {
			if c.CellID != o.CellID {
				continue
			}
			p("| %s | %d | %d | %s | %s | %s | %s |\n", mdCell(c.Scenario), c.Measured, c.Failures, pct(c.FailureRate),
				ciString(c.CI95), ciString(c.ClopperPearson), mdCell(rowNote(c.Counts)))
		}
		p("\n")
	}

	p("## Expected\n\n%s\n\n", orDefault(opts.Expected, DefaultExpected))

	p("## Evidence\n\nOne example trial per outcome and cell.\n\n")
	for _, o := range rep.Overall {
		for _, name := range outcomeOrder(o.Outcomes) {
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
			codeBlock(bw, "json", exampleEvidence(rep, ex, PageEvidenceBytes))
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
		notes = append(notes, fmt.Sprintf("rule of three: < %s", pct(*c.RuleOfThree)))
	}
	if c.TrialsNeeded != nil && c.TrialsNeeded.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more clean trials to claim < %s", c.TrialsNeeded.More, pct(c.TrialsNeeded.Rate)))
	}
	if c.SPRT != nil {
		notes = append(notes, fmt.Sprintf("SPRT %s after %d", c.SPRT.Decision, c.SPRT.Trials))
	}
	if c.FailOpen > 0 {
		notes = append(notes, fmt.Sprintf("FAIL-OPEN x%d: %s", c.FailOpen, c.Breached()))
	}
	for _, n := range []string{knownNote(c), fixedNote(c)} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if h := c.Trials - c.Measured; h > 0 {
		notes = append(notes, fmt.Sprintf("%d not measured", h))
	}
	return strings.Join(notes, "; ")
}

func hostNames(rep *schema.Report) []string {
	seen := map[string]bool{}
	var out []string
	for h := range rep.Hosts {
		seen[h] = true
		out = append(out, h)
	}
	// Hosts that ran trials but recorded no fingerprint still get a table of "unknown".
	for _, o := range rep.Overall {
		if k := schema.HostKey(o.Host, o.User); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func orUnknown(s string) string { return orDefault(s, "unknown") }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
