package orchestrate

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets"
)

// Reports turns journals into the report model and writes it as report.json, report.md,
// junit.xml and report.html in dir; the model is returned even when writing fails. version is
// sandcheck's, repro the command line that reproduces the run; warnings go to log.
func Reports(dir string, journals []string, version, repro string, log io.Writer) (*schema.Report, error) {
	rep, res, err := aggregate.FromJournals(journals, aggregate.Options{SandcheckVersion: version})
	if err != nil {
		return nil, err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(log, "warning: %s\n", w)
	}
	networkPolicies(rep)
	return rep, format.WriteAll(dir, rep, format.Options{Repro: repro})
}

// networkPolicies puts each cell's network policy in the report, for the truth tables: the
// channels its target promises the allowed host (targets.Target.Reach), from the target's adapter
// as it loads here without settings. A target that does not load so (not linked in, not
// installed here, or one whose reach is a setting of its own, such as the command target) keeps
// none: the truth table then says it does not know the allowed host's expectation, never guesses.
func networkPolicies(rep *schema.Report) {
	known := map[string]*schema.NetworkPolicy{}
	for i, o := range rep.Overall {
		p, ok := known[o.Target]
		if !ok {
			if t, err := targets.New(o.Target, map[string]string{}); err == nil {
				p = &schema.NetworkPolicy{Reach: append([]string{}, t.Reach()...)}
			}
			known[o.Target] = p
		}
		rep.Overall[i].Network = p
	}
}
