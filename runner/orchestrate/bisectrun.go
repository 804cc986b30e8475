package orchestrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/bisect"
	"github.com/sandcheck/sandcheck/targets"
)

// BisectJob is one bisect as `sandcheck bisect` asks for it: the releases to search (from
// BisectRange, good first), the scenarios and fault whose outcomes decide, and the search's own
// settings (directory, trials, error rates, progress).
type BisectJob struct {
	Target   matrix.Target
	NPM      targets.NPM
	Releases []string
	Good     string // the first release, known good
	Bad      string // the last release, known bad
	Labels   string
	Fault    string // normalized (matrix.NormalizeFault)
	User     string // who the sandbox runs as (model.CheckUser; "": the default, unprivileged)
	Trial    *Trial
	Options  bisect.Options
	// Reports writes the reports of the versions the search ran into dir, beside its journal.
	Reports func(dir string, journals []string) error
}

// BisectOutput is the answer of a bisect (its --json, and bisect.json in its directory): the
// search's result and what was searched.
type BisectOutput struct {
	Target  string `json:"target"`
	Package string `json:"package"`
	Labels  string `json:"label_filter"`
	Fault   string `json:"fault,omitempty"`
	*bisect.Result
	Reports string `json:"reports,omitempty"`
	Error   string `json:"error,omitempty"`
}

// RunBisect runs the search (Bisect), then writes the reports of the versions it ran (a version
// table) and bisect.json into its directory. The output's Result is nil when the search did not
// get to run; err is the search's (bisect.ErrNoDifference when the endpoints do not differ).
func RunBisect(ctx context.Context, self string, j BisectJob) (BisectOutput, error) {
	list, opt := j.Releases, j.Options
	fmt.Fprintf(opt.Progress, "bisect %s (%s) on %q: %s (good) .. %s (bad), %d releases\n", j.Target.Name, j.NPM.Package, j.Labels,
		j.Good, j.Bad, len(list))
	res, err := Bisect(ctx, self, j.Target, j.NPM, list, j.Labels, j.Fault, j.User, j.Trial, opt)
	out := BisectOutput{Target: j.Target.Name, Package: j.NPM.Package, Labels: j.Labels, Fault: j.Fault, Result: res}
	if res != nil {
		if j.Reports != nil && j.Reports(opt.Dir, []string{res.Journal}) == nil {
			out.Reports = opt.Dir
		}
		var b strings.Builder
		out.WriteJSON(&b)
		os.WriteFile(filepath.Join(opt.Dir, "bisect.json"), []byte(b.String()), 0o644)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out, err
}

// WriteJSON writes the output as one indented JSON object. Label filters hold && and ||: they
// are written as they are, not HTML-escaped.
func (o BisectOutput) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(o)
}

// WriteText is the answer for people: the first version that differs, the evidence, the cost.
func (o BisectOutput) WriteText(w io.Writer) {
	r := o.Result
	if r.Undecided != "" {
		fmt.Fprintf(w, "\nundecided: %s\n", r.Undecided)
	} else {
		fmt.Fprintf(w, "\nfirst version that differs: %s %s (last like %s: %s)\n", o.Target, r.FirstBad, r.Good, r.LastGood)
	}
	fmt.Fprintf(w, "  decided on: %s\n", r.Event)
	fmt.Fprintf(w, "  each step: SPRT %s, alpha %g, beta %g; the answer is right with probability >= %.2f (given one change between %s and %s)\n",
		r.Hypotheses, r.Alpha, r.Beta, r.Confidence, r.Good, r.Bad)
	for _, s := range r.Steps {
		if s.Version != r.FirstBad && s.Version != r.LastGood {
			continue
		}
		fmt.Fprintf(w, "  evidence at %s: %d of %d trials showed the event", s.Version, s.Events, s.Trials)
		if s.Example != "" {
			fmt.Fprintf(w, "; e.g. %s", s.Example)
		}
		fmt.Fprintln(w)
	}
	ends, steps := 0, 0
	var path []string
	for _, s := range r.Steps {
		if s.Role == "midpoint" {
			steps += s.Trials
			like := map[string]string{"looks-good": "like " + r.Good, "looks-bad": "like " + r.Bad}[s.Verdict]
			if like == "" {
				like = s.Verdict
			}
			path = append(path, fmt.Sprintf("%s %s (%d trials)", s.Version, like, s.Trials))
		} else {
			ends += s.Trials
		}
	}
	fmt.Fprintf(w, "  path: %s\n", strings.Join(path, ", "))
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "  skipped (no trial measured anything: this harness cannot judge them): %s\n", strings.Join(r.Skipped, ", "))
	}
	fmt.Fprintf(w, "  trials: %d (endpoints %d, %d steps %d); running all %d versions at the endpoints' %d trials: %d\n",
		r.Trials, ends, len(path), steps, r.Versions, r.Steps[0].Trials, r.SweepTrials)
	fmt.Fprintf(w, "  journal: %s", r.Journal)
	if o.Reports != "" {
		fmt.Fprintf(w, "; reports: %s/report.md", o.Reports)
	}
	fmt.Fprintln(w)
}
